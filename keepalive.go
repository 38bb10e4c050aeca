package fence

// The keepalive: one goroutine per Session, running while the session
// holds at least one lease (on the system clock, from the first time a
// lease falls due: a timer starts it). It owns the renewal state of every
// handle: when each is next due, its safety deadline, its transient
// failures. At most one renewal round is in flight at a time; it runs on
// its own goroutine, so that the keepalive keeps watching the deadlines
// while a store call hangs.

import (
	"context"
	"time"

	"github.com/fencekit/fence/internal/backoff"
)

// hstate is the keepalive's view of one handle, guarded by Session.mu.
type hstate struct {
	deadline  time.Time // send time of the last successful acquire/renew + TTL - margin
	nextRenew time.Time
	failures  int   // transient failures since the last success
	lastErr   error // last transient renewal error since the last success
	busy      bool  // in the round in flight
	gone      bool  // lost, or let go: no more renewals
	waiting   chan struct{}
}

// round is one renewal round: what was renewed, and what came back.
type round struct {
	sent    time.Time
	until   time.Time // the latest safety deadline of the round's handles
	handles []*Handle
	leases  []Lease
	renewed []Lease
	errs    []error
	infos   []LockInfo // re-reads after ambiguous renewals
	ierrs   []error
	read    []bool
}

// track adds h to the keepalive, starting it if it is not running: its
// first renewal is due RenewInterval after at, its deadline is sent + TTL
// - margin.
func (s *Session) track(h *Handle, sent, at time.Time) {
	st := &h.ka // zero: h is new
	st.deadline, st.nextRenew = sent.Add(s.s.ttl-s.s.safetyMargin), at.Add(s.s.renewInterval)
	s.mu.Lock()
	if s.hs == nil {
		s.hs = make(map[*Handle]*hstate)
	}
	s.hs[h] = st
	var start, poke bool
	switch {
	case s.running:
		// The keepalive needs to hear of h only if h is due before what
		// its timers wait for.
		poke = st.nextRenew.Before(s.armedRenew) || st.deadline.Before(s.armedDeadline) || s.armedRenew.IsZero()
	case s.sys:
		// Nothing is due before h's first renewal or its deadline: a
		// timer starts the keepalive then (or sooner, when it is armed
		// already), so that a handle released sooner costs no goroutine.
		due, d := st.nextRenew, s.s.renewInterval
		if st.deadline.Before(due) {
			due, d = st.deadline, time.Until(st.deadline)
		}
		if s.startAt.IsZero() || due.Before(s.startAt) {
			s.startAt = due
			if s.starter == nil {
				s.starter = time.AfterFunc(d, s.startKeepalive)
			} else {
				s.starter.Reset(d)
			}
		}
	default:
		start, s.running = true, true
	}
	s.mu.Unlock()
	if start {
		go s.keepalive()
	} else if poke {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// startKeepalive runs the keepalive when the timer armed by track fires,
// unless it runs already or the session holds nothing.
func (s *Session) startKeepalive() {
	s.mu.Lock()
	if s.running || s.startAt.IsZero() {
		s.mu.Unlock()
		return
	}
	s.startAt = time.Time{}
	if len(s.hs) == 0 {
		s.mu.Unlock()
		return
	}
	s.running = true
	s.mu.Unlock()
	s.keepalive()
}

// letGo stops renewing h and waits until no call for it is in flight.
func (s *Session) letGo(h *Handle) {
	s.mu.Lock()
	st := s.hs[h]
	switch {
	case st == nil:
		s.mu.Unlock()
	case st.busy:
		st.gone = true
		w := make(chan struct{})
		st.waiting = w
		s.mu.Unlock()
		<-w
	case !s.running:
		// The timer that starts the keepalive stays armed: when it
		// fires with nothing to renew, it does nothing, and a handle
		// taken meanwhile needs no new timer.
		delete(s.hs, h)
		s.mu.Unlock()
	default:
		delete(s.hs, h)
		// The keepalive's timers may wait for h alone: let it re-arm
		// them, or stop when it has nothing left to renew.
		poke := len(s.hs) == 0 || st.nextRenew.Equal(s.armedRenew) || st.deadline.Equal(s.armedDeadline)
		s.mu.Unlock()
		if poke {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}

// handles returns the handles the session holds.
func (s *Session) handles() []*Handle {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Handle, 0, len(s.hs))
	for h, st := range s.hs {
		if !st.gone {
			out = append(out, h)
		}
	}
	return out
}

// timerAt is a Clock timer that is re-armed only when its time changes.
type timerAt struct {
	clock Clock
	t     Timer
	at    time.Time
}

func (t *timerAt) set(at time.Time) {
	if t.t != nil && at.Equal(t.at) {
		return
	}
	t.stop()
	if at.IsZero() {
		return
	}
	t.at = at
	t.t = t.clock.NewTimer(at.Sub(t.clock.Now()))
}

func (t *timerAt) stop() {
	if t.t != nil {
		t.t.Stop()
		t.t = nil
	}
}

func (t *timerAt) c() <-chan time.Time {
	if t.t == nil {
		return nil
	}
	return t.t.C()
}

// loss is a handle to declare lost, outside Session.mu.
type loss struct {
	h      *Handle
	reason error
}

func (s *Session) keepalive() {
	clock := s.s.clock
	renewT, deadT := &timerAt{clock: clock}, &timerAt{clock: clock}
	defer renewT.stop()
	defer deadT.stop()
	results := make(chan *round, 1)
	inflight := false
	var losses []loss
	var waiting []chan struct{}
	for {
		s.mu.Lock()
		now := clock.Now()
		// Deadlines first: when a renewal and a deadline fall due in
		// one step of the clock, the deadline wins.
		for h, st := range s.hs {
			if !st.gone && !now.Before(st.deadline) {
				st.gone = true
				losses = append(losses, loss{h, &DeadlineError{Deadline: st.deadline, Err: st.lastErr, InFlight: st.busy}})
			}
			if st.gone && !st.busy {
				delete(s.hs, h)
				if st.waiting != nil {
					waiting = append(waiting, st.waiting)
				}
			}
		}
		var r *round
		if !inflight {
			if r = s.dueRound(now); r != nil {
				inflight = true
			}
		}
		if len(s.hs) == 0 && !inflight {
			s.running = false
			s.armedRenew, s.armedDeadline = time.Time{}, time.Time{}
			s.mu.Unlock()
			s.settleOutside(losses, waiting)
			return
		}
		var nextDeadline, nextRenew time.Time
		for _, st := range s.hs {
			if st.gone {
				continue
			}
			if nextDeadline.IsZero() || st.deadline.Before(nextDeadline) {
				nextDeadline = st.deadline
			}
			if !inflight && (nextRenew.IsZero() || st.nextRenew.Before(nextRenew)) {
				nextRenew = st.nextRenew
			}
		}
		s.armedRenew, s.armedDeadline = nextRenew, nextDeadline
		if inflight {
			// A handle added meanwhile waits for the round to settle.
			s.armedRenew = now.Add(s.s.renewInterval)
		}
		s.mu.Unlock()
		s.settleOutside(losses, waiting)
		losses, waiting = losses[:0], waiting[:0]
		if r != nil {
			go s.renewRound(r, results)
		}
		deadT.set(nextDeadline)
		renewT.set(nextRenew)
		select {
		case <-s.wake:
		case r := <-results:
			inflight = false
			s.mu.Lock()
			var events []RenewedEvent
			losses, events = s.settle(r, losses)
			s.mu.Unlock()
			if s.obs() != nil {
				for _, e := range events {
					s.obs().renewed(e)
				}
			}
		case <-deadT.c():
			deadT.t = nil
		case <-renewT.c():
			renewT.t = nil
		}
	}
}

// settleOutside declares losses and wakes the releases waiting for a
// round, without holding Session.mu (losses call the Observer and cancel
// contexts).
func (s *Session) settleOutside(losses []loss, waiting []chan struct{}) {
	for _, l := range losses {
		l.h.lose(l.reason)
	}
	for _, w := range waiting {
		close(w)
	}
}

// dueRound returns the round to start at now, or nil when no lease is
// due. Once one lease is due, every lease due within half a renewal
// interval joins it: renewing early is harmless, and it keeps the
// session's leases in step, one round per interval.
func (s *Session) dueRound(now time.Time) *round {
	due := false
	for _, st := range s.hs {
		if !st.gone && !now.Before(st.nextRenew) {
			due = true
			break
		}
	}
	if !due {
		return nil
	}
	r := &round{handles: make([]*Handle, 0, len(s.hs)), leases: make([]Lease, 0, len(s.hs))}
	soon := now.Add(s.s.renewInterval / 2)
	for h, st := range s.hs {
		if !st.gone && !soon.Before(st.nextRenew) {
			st.busy = true
			r.handles = append(r.handles, h)
			r.leases = append(r.leases, h.Lease())
			if st.deadline.After(r.until) {
				r.until = st.deadline
			}
		}
	}
	return r
}

// renewRound renews the leases of r, re-reads the records of those whose
// renewal had an ambiguous outcome, and sends r back. Each store call has
// the session's CallTimeout; the renewals, and then the re-reads, end by
// the latest safety deadline of the round's handles (or one CallTimeout
// from their start, if later): past it, every handle of the round has
// been declared lost, and no answer counts.
func (s *Session) renewRound(r *round, results chan<- *round) {
	r.sent = s.s.clock.Now()
	ctx, cancel := context.WithTimeout(context.Background(), max(r.until.Sub(r.sent), s.s.callTimeout))
	r.renewed, r.errs = s.locker.renewMany(ctx, r.leases, s.s.callTimeout)
	cancel()
	var reread []int
	for i, err := range r.errs {
		if err == nil || definitive(err) || r.handles[i].releasing.Load() {
			continue // settled, or the release that follows settles it
		}
		reread = append(reread, i)
	}
	if s.locker.renewBatch != nil && len(reread) > 1 && len(reread) == len(r.leases) {
		// The batch failed as a whole: its retry, one call again, tells
		// as much as a re-read of every lease would, at the cost of one.
		reread = nil
	}
	if len(reread) > 0 {
		r.infos, r.ierrs, r.read = make([]LockInfo, len(r.leases)), make([]error, len(r.leases)), make([]bool, len(r.leases))
		ctx, cancel := context.WithTimeout(context.Background(), max(r.until.Sub(s.s.clock.Now()), s.s.callTimeout))
		each(ctx, len(reread), s.s.callTimeout, func(ctx context.Context, j int) {
			i := reread[j]
			r.infos[i], r.ierrs[i] = s.locker.Inspect(ctx, r.leases[i].Key)
			r.read[i] = true
		})
		cancel()
	}
	results <- r
}

// settle applies the outcome of round r, with Session.mu held, and
// returns losses with the handles to declare lost appended.
func (s *Session) settle(r *round, losses []loss) ([]loss, []RenewedEvent) {
	now := s.s.clock.Now()
	var events []RenewedEvent
	observed := s.obs() != nil
	event := func(e RenewedEvent) {
		if observed {
			events = append(events, e)
		}
	}
	for i, h := range r.handles {
		st := s.hs[h]
		if st == nil {
			continue
		}
		st.busy = false
		if st.gone {
			continue // lost meanwhile, or let go: the loop drops it
		}
		lease, err := r.leases[i], r.errs[i]
		switch {
		case err == nil && r.renewed[i].Token != lease.Token:
			err = &CorruptError{Key: lease.Key, Reason: "renewal changed the token"}
			event(RenewedEvent{Lease: lease, Err: err})
			st.gone = true
			losses = append(losses, loss{h, err})
		case err == nil:
			h.setLease(r.renewed[i])
			event(RenewedEvent{Lease: r.renewed[i]})
			st.lastErr, st.failures = nil, 0
			st.deadline = r.sent.Add(s.s.ttl - s.s.safetyMargin)
			st.nextRenew = now.Add(s.s.renewInterval)
		case definitive(err):
			event(RenewedEvent{Lease: lease, Err: err})
			st.gone = true
			losses = append(losses, loss{h, err})
		default:
			// The outcome is unknown: the store may have applied the
			// renewal. The round re-read the record instead of guessing.
			event(RenewedEvent{Lease: lease, Err: err})
			st.lastErr = err
			read := r.read != nil && r.read[i]
			switch {
			case read && r.ierrs[i] == nil && !ours(r.infos[i], lease):
				st.gone = true
				losses = append(losses, loss{h, &ReconcileError{Lease: lease, Found: r.infos[i], RenewErr: err}})
				continue
			case read && r.ierrs[i] != nil && definitive(r.ierrs[i]):
				st.gone = true
				losses = append(losses, loss{h, r.ierrs[i]})
				continue
			}
			// Still ours, or unknown: retry soon. Only a successful
			// retry moves the deadline, from the retry's own send time.
			st.failures++
			st.nextRenew = now.Add(backoff.Policy{First: min(s.s.backoffMin, s.s.renewInterval), Max: min(s.s.backoffMax, s.s.renewInterval)}.Delay(st.failures))
		}
	}
	return losses, events
}
