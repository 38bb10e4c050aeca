package torture

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/backoff"
)

// LongJob is a lease a worker held for several TTLs, through several
// renewals, writing under it every half TTL, and then released.
type LongJob struct {
	Worker int
	Key    string
	Token  fence.Token
	// Clean is true for the run's guaranteed long job: on a key of its
	// own, with its HTTP requests passing the faults (see WithoutFaults).
	Clean bool
	// Renewals counts the successful renewals.
	Renewals int
	// Released is true when the job ended with its lease freed: no loss,
	// no failed release.
	Released bool
	// Err says how it ended otherwise.
	Err string
}

func (j LongJob) String() string {
	s := fmt.Sprintf("worker %d's long job on %q with token %d, %d renewals", j.Worker, j.Key, j.Token, j.Renewals)
	if j.Err != "" {
		s += ": " + j.Err
	}
	return s
}

// Refusal is a release the store refused (fence.ErrNotHeld) after at least
// one successful renewal, with no loss seen before it: the guard held the
// lease to the end and could not free it, as when a release carries the
// lease as it was before its renewals.
type Refusal struct {
	Worker   int
	Key      string
	Token    fence.Token
	Renewals int
	// Long and Clean tell whether the lease was a long job, and the run's
	// guaranteed one.
	Long, Clean bool
	Err         string
}

func (r Refusal) String() string {
	return fmt.Sprintf("worker %d's release of %q with token %d after %d renewals was refused: %s", r.Worker, r.Key, r.Token, r.Renewals, r.Err)
}

// plan is what a worker does with its next lease.
type plan struct {
	key string
	// long is how long the lease is held as a long job; 0 for the usual
	// one to three writes.
	long  time.Duration
	clean bool
}

// minLongJob is the shortest long job for leases of ttl: two TTLs, about
// six renewals.
func minLongJob(ttl time.Duration) time.Duration { return 2 * ttl }

// next plans the worker's next lease: the guaranteed long job while it has
// not been released and still fits in the run; otherwise, once worker 1's
// guaranteed pause has begun, a long job with Config.LongJobChance when
// one fits; or the usual writes. The key is random, but the one worker 1's
// guaranteed pause waits on while it does.
func (w *worker) next() plan {
	left := time.Until(w.deadline) - w.ttl/2
	if w.longKey != "" && !w.longDone && left >= minLongJob(w.ttl) {
		return plan{key: w.longKey, long: min(3*w.ttl, left), clean: true}
	}
	p := plan{key: w.keys[rand.IntN(len(w.keys))]}
	if k := w.awaited.Load(); k != nil {
		p.key = *k // worker 1's guaranteed pause waits for a write on it
	}
	if left >= minLongJob(w.ttl) && w.pauseBegun.Load() && chance(w.cfg.LongJobChance) {
		p.long = min(randDuration(minLongJob(w.ttl), 3*w.ttl), left)
	}
	return p
}

// longJob writes under h every half TTL until d has passed or the lease
// is lost.
func (w *worker) longJob(wctx context.Context, h *fence.Handle, d time.Duration) {
	end := time.Now().Add(d)
	for wctx.Err() == nil {
		w.readModifyWrite(wctx, h, false)
		left := time.Until(end)
		if left <= 0 || backoff.Sleep(wctx, min(w.ttl/2, left)) != nil {
			return
		}
	}
}

// settle records how the lease of p ended: a loss, a refused release, a
// long job.
func (w *worker) settle(p plan, err error) {
	st := w.watch.snapshot()
	if !st.acquired {
		return
	}
	if errors.Is(err, fence.ErrLeaseLost) {
		w.rec.leaseLost()
	}
	// A release answered after the lease's latest renewal ran out (one
	// held up by a server restart, say) was refused rightly: only one
	// refused while the lease still ran counts.
	if st.released && errors.Is(st.releaseErr, fence.ErrNotHeld) && st.renewals > 0 && !st.lostBefore && st.answeredInTime {
		w.rec.refusal(Refusal{Worker: w.id, Key: p.key, Token: st.token, Renewals: st.renewals,
			Long: p.long > 0, Clean: p.clean, Err: st.releaseErr.Error()})
	}
	if p.long == 0 {
		return
	}
	j := LongJob{Worker: w.id, Key: p.key, Token: st.token, Clean: p.clean, Renewals: st.renewals}
	switch {
	case err != nil:
		j.Err = err.Error()
	case st.releaseErr != nil:
		j.Err = "release: " + st.releaseErr.Error()
	default:
		j.Released = true
	}
	w.rec.longJob(j)
	if p.clean && j.Released {
		w.longDone = true
	}
}

// leaseWatch follows a worker's current lease through its guard's events.
type leaseWatch struct {
	clock fence.Clock // the guard's and the locker's
	mu    sync.Mutex
	leaseState
}

type leaseState struct {
	acquired   bool
	token      fence.Token
	renewals   int  // successful ones
	lostBefore bool // a loss was seen before the release
	released   bool
	releaseErr error
	// answeredInTime: the release's answer came before the ValidUntil of
	// the lease's latest renewal, on the locker's clock.
	answeredInTime bool
}

// reset forgets the last lease, before the next Do.
func (l *leaseWatch) reset() {
	l.mu.Lock()
	l.leaseState = leaseState{}
	l.mu.Unlock()
}

func (l *leaseWatch) snapshot() leaseState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leaseState
}

func (l *leaseWatch) update(f func(*leaseState)) {
	l.mu.Lock()
	f(&l.leaseState)
	l.mu.Unlock()
}

// observer is the guard's Observer that feeds l.
func (l *leaseWatch) observer() *fence.Observer {
	return &fence.Observer{
		Acquired: func(e fence.AcquiredEvent) {
			l.update(func(s *leaseState) { s.acquired, s.token = true, e.Lease.Token })
		},
		Renewed: func(e fence.RenewedEvent) {
			if e.Err == nil {
				l.update(func(s *leaseState) { s.renewals++ })
			}
		},
		LeaseLost: func(fence.LeaseLostEvent) {
			l.update(func(s *leaseState) { s.lostBefore = s.lostBefore || !s.released })
		},
		Released: func(e fence.ReleasedEvent) {
			inTime := l.clock.Now().Before(e.Lease.ValidUntil)
			l.update(func(s *leaseState) { s.released, s.releaseErr, s.answeredInTime = true, e.Err, inTime })
		},
	}
}
