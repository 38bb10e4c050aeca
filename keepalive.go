package fence

// The keepalive: one goroutine per Session, running while the session
// holds at least one lease. It owns the renewal state of every handle:
// when each is next due, its safety deadline, its transient failures. At
// most one renewal round is in flight at a time; it runs on its own
// goroutine, so that the keepalive keeps watching the deadlines while a
// store call hangs.

import (
	"context"
	"time"

	"github.com/fencekit/fence/internal/backoff"
)

// sessionOp is a request to the keepalive: add a handle, or let one go.
type sessionOp struct {
	add   *Handle
	state hstate // of add
	let   *Handle
	reply chan struct{} // of let: closed once no call for it is in flight
}

// hstate is the keepalive's view of one handle.
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
	handles []*Handle
	leases  []Lease
	renewed []Lease
	errs    []error
	infos   []LockInfo // re-reads after ambiguous renewals
	ierrs   []error
	read    []bool
}

// send passes op to the keepalive, starting it if it is not running.
func (s *Session) send(op sessionOp) {
	s.mu.Lock()
	s.pending++
	if !s.running {
		s.running = true
		go s.keepalive()
	}
	s.mu.Unlock()
	s.ops <- op
}

// track adds h to the keepalive: its first renewal is due RenewInterval
// after at, its deadline is sent + TTL - margin.
func (s *Session) track(h *Handle, sent, at time.Time) {
	s.mu.Lock()
	if s.live == nil {
		s.live = make(map[*Handle]struct{})
	}
	s.live[h] = struct{}{}
	s.mu.Unlock()
	s.send(sessionOp{add: h, state: hstate{deadline: sent.Add(s.s.ttl - s.s.safetyMargin), nextRenew: at.Add(s.s.renewInterval)}})
}

// letGo stops renewing h and waits until no call for it is in flight.
func (s *Session) letGo(h *Handle) {
	reply := make(chan struct{})
	s.send(sessionOp{let: h, reply: reply})
	<-reply
}

// forget drops h from the session's handles.
func (s *Session) forget(h *Handle) {
	s.mu.Lock()
	delete(s.live, h)
	s.mu.Unlock()
}

// handles returns the handles the session holds.
func (s *Session) handles() []*Handle {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Handle, 0, len(s.live))
	for h := range s.live {
		out = append(out, h)
	}
	return out
}

// Len returns the number of handles the session holds (not yet released).
func (s *Session) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
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

func (s *Session) keepalive() {
	clock := s.s.clock
	hs := make(map[*Handle]*hstate)
	renewT, deadT := &timerAt{clock: clock}, &timerAt{clock: clock}
	defer renewT.stop()
	defer deadT.stop()
	results := make(chan *round, 1)
	inflight := false
	for {
		now := clock.Now()
		// Deadlines first: when a renewal and a deadline fall due in
		// one step of the clock, the deadline wins.
		for h, st := range hs {
			if !st.gone && !now.Before(st.deadline) {
				st.gone = true
				h.lose(&DeadlineError{Deadline: st.deadline, Err: st.lastErr, InFlight: st.busy})
			}
			if st.gone && !st.busy {
				delete(hs, h)
				if st.waiting != nil {
					close(st.waiting)
				}
			}
		}
		if !inflight {
			if r := s.dueRound(hs, now); r != nil {
				inflight = true
				go s.renewRound(r, results)
			}
		}
		if len(hs) == 0 && !inflight {
			s.mu.Lock()
			if s.pending == 0 {
				s.running = false
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
		}
		var nextDeadline, nextRenew time.Time
		for _, st := range hs {
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
		deadT.set(nextDeadline)
		renewT.set(nextRenew)
		select {
		case op := <-s.ops:
			s.mu.Lock()
			s.pending--
			s.mu.Unlock()
			switch {
			case op.add != nil:
				st := op.state
				hs[op.add] = &st
			case op.let != nil:
				st, ok := hs[op.let]
				switch {
				case !ok:
					close(op.reply)
				case st.busy:
					st.gone = true
					st.waiting = op.reply
				default:
					delete(hs, op.let)
					close(op.reply)
				}
			}
		case r := <-results:
			inflight = false
			s.settle(hs, r)
		case <-deadT.c():
			deadT.t = nil
		case <-renewT.c():
			renewT.t = nil
		}
	}
}

// dueRound returns the round to start at now, or nil when no lease is
// due. Once one lease is due, every lease due within half a renewal
// interval joins it: renewing early is harmless, and it keeps the
// session's leases in step, one round per interval.
func (s *Session) dueRound(hs map[*Handle]*hstate, now time.Time) *round {
	due := false
	for _, st := range hs {
		if !st.gone && !now.Before(st.nextRenew) {
			due = true
			break
		}
	}
	if !due {
		return nil
	}
	r := &round{}
	soon := now.Add(s.s.renewInterval / 2)
	for h, st := range hs {
		if !st.gone && !soon.Before(st.nextRenew) {
			st.busy = true
			r.handles = append(r.handles, h)
			r.leases = append(r.leases, h.Lease())
		}
	}
	return r
}

// renewRound renews the leases of r, re-reads the records of those whose
// renewal had an ambiguous outcome, and sends r back.
func (s *Session) renewRound(r *round, results chan<- *round) {
	r.sent = s.s.clock.Now()
	ctx, cancel := context.WithTimeout(context.Background(), s.s.callTimeout)
	r.renewed, r.errs = s.renew(ctx, r.leases)
	cancel()
	r.infos, r.ierrs, r.read = make([]LockInfo, len(r.leases)), make([]error, len(r.leases)), make([]bool, len(r.leases))
	for i, err := range r.errs {
		if err == nil || definitive(err) || r.handles[i].releasing.Load() {
			continue // settled, or the release that follows settles it
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.s.callTimeout)
		r.infos[i], r.ierrs[i] = s.locker.Inspect(ctx, r.leases[i].Key)
		r.read[i] = true
		cancel()
	}
	results <- r
}

// settle applies the outcome of round r.
func (s *Session) settle(hs map[*Handle]*hstate, r *round) {
	now := s.s.clock.Now()
	obs := s.s.obs
	for i, h := range r.handles {
		st := hs[h]
		st.busy = false
		if st.gone {
			continue // lost meanwhile, or let go: the loop drops it
		}
		lease, err := r.leases[i], r.errs[i]
		switch {
		case err == nil && r.renewed[i].Token != lease.Token:
			err = &CorruptError{Key: lease.Key, Reason: "renewal changed the token"}
			obs.renewed(RenewedEvent{Lease: lease, Err: err})
			st.gone = true
			h.lose(err)
		case err == nil:
			h.setLease(r.renewed[i])
			obs.renewed(RenewedEvent{Lease: r.renewed[i]})
			st.lastErr, st.failures = nil, 0
			st.deadline = r.sent.Add(s.s.ttl - s.s.safetyMargin)
			st.nextRenew = now.Add(s.s.renewInterval)
		case definitive(err):
			obs.renewed(RenewedEvent{Lease: lease, Err: err})
			st.gone = true
			h.lose(err)
		default:
			// The outcome is unknown: the store may have applied the
			// renewal. The round re-read the record instead of guessing.
			obs.renewed(RenewedEvent{Lease: lease, Err: err})
			st.lastErr = err
			switch {
			case r.read[i] && r.ierrs[i] == nil && !ours(r.infos[i], lease):
				st.gone = true
				h.lose(&ReconcileError{Lease: lease, Found: r.infos[i], RenewErr: err})
				continue
			case r.read[i] && r.ierrs[i] != nil && definitive(r.ierrs[i]):
				st.gone = true
				h.lose(r.ierrs[i])
				continue
			}
			// Still ours, or unknown: retry soon. Only a successful
			// retry moves the deadline, from the retry's own send time.
			st.failures++
			st.nextRenew = now.Add(backoff.Policy{First: min(s.s.backoffMin, s.s.renewInterval), Max: min(s.s.backoffMax, s.s.renewInterval)}.Delay(st.failures))
		}
	}
}
