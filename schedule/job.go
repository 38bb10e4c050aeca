package schedule

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/guard"
)

// Func is the work of one run. window is the start of the window being
// run, in UTC; h is the job's lock: h.Token() is the fencing token that
// every write to a protected resource must carry. The session renews the
// lease and keeps h current, so it never goes stale, however long the
// run. ctx is cancelled when the lease is lost (cause: a
// *fence.LeaseLostError) or when the ctx given to Run or Attempt ends.
type Func func(ctx context.Context, window time.Time, h *fence.Handle) error

// Job runs a function at most once per window across the replicas that
// run the same Job (same name, interval and offset) on the same lock
// store. Create it with New; it is safe for concurrent use.
type Job struct {
	sess *fence.Session
	name string
	fn   Func
	s    settings
}

// New returns a Job named name that runs fn once per interval, taking
// its lock through s: the lock's lease has the session's TTL (ShedLock's
// lockAtMostFor) and renewals. It returns an error matching
// fence.ErrInvalid for a nil s or fn, an empty name or impossible options
// (see Options); the locker checks the key's length and the TTL's range
// on the first attempt.
func New(s *fence.Session, name string, interval time.Duration, fn Func, opts *Options) (*Job, error) {
	if s == nil {
		return nil, invalid("session", "nil")
	}
	if err := driver.ValidateKey("name", name, math.MaxInt); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, invalid("fn", "nil")
	}
	st, err := resolve(interval, opts)
	if err != nil {
		return nil, err
	}
	st.clock = s.Clock()
	return &Job{sess: s, name: name, fn: fn, s: st}, nil
}

// Window returns the start of the window that holds t, in UTC.
func (j *Job) Window(t time.Time) time.Time {
	return windowStart(t, j.s.interval, j.s.offset)
}

// Run attempts each window once, at its start (and the current window at
// once), until ctx is done. Outcomes and errors go to Options.Observer;
// none stops Run, except an error matching fence.ErrInvalid before the
// job ran (the locker rejects the name or the session's TTL) or
// fence.ErrSessionClosed (the session was closed), which Run returns.
// Otherwise Run returns context.Cause(ctx) once ctx is done and any run
// has ended and released its lock.
func (j *Job) Run(ctx context.Context) error {
	var last time.Time
	for {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		w := j.Window(j.s.clock.Now())
		if !w.Equal(last) {
			last = w
			out, err := j.attempt(ctx, w)
			if out == Failed && (errors.Is(err, fence.ErrInvalid) || errors.Is(err, fence.ErrSessionClosed)) {
				return err
			}
			continue // the attempt may have lasted into another window
		}
		t := j.s.clock.NewTimer(w.Add(j.s.interval).Sub(j.s.clock.Now()))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		}
	}
}

// Attempt tries once to run the job for the current window, and reports
// the outcome to Options.Observer too. The error is nil for Busy, Done
// and a run without error; for Ran it is the job's error or the loss of
// the lease; for Failed, why the attempt failed. Attempt returns after the
// lock is released, LockAtLeastFor after the run started at the earliest.
// It is for callers that schedule attempts themselves, such as a cron job
// started on every replica; Run calls it at each window's start.
func (j *Job) Attempt(ctx context.Context) (Outcome, error) {
	return j.attempt(ctx, j.Window(j.s.clock.Now()))
}

func (j *Job) attempt(ctx context.Context, window time.Time) (Outcome, error) {
	var (
		got *fence.Handle // the job lock, once taken
		ran bool          // fn was called
	)
	err := guard.Run(ctx, j.sess, j.name, func(ctx context.Context, h *fence.Handle) error {
		got = h
		start := j.s.clock.Now()
		fresh, err := j.mark(ctx, window)
		if err != nil || !fresh {
			return err
		}
		ran = true
		err = j.fn(ctx, window, h)
		j.hold(ctx, start.Add(j.s.atLeast))
		return err
	}, nil)
	took := got != nil
	var lease fence.Lease
	if took {
		lease = got.Lease() // as last renewed
	}
	var out Outcome
	switch {
	case ran:
		out = Ran
	case err == nil && took:
		out = Done
	case err != nil && !took && errors.Is(err, fence.ErrHeld):
		out, err = Busy, nil
	default:
		out = Failed
	}
	j.s.obs.attempted(AttemptEvent{Name: j.name, Window: window, Outcome: out, Lease: lease, Err: err})
	return out, err
}

// mark checks that no replica has started window and marks it started. It
// runs under the job's lock. It reports false, with no error, when the
// window was already marked or is being marked by another replica; an
// error when the store could not tell or the outcome of the mark is
// unknown (the window is then skipped: at most once wins over at least
// once).
func (j *Job) mark(ctx context.Context, window time.Time) (bool, error) {
	key := markKey(j.name, window)
	locker := j.sess.Locker()
	info, err := locker.Inspect(ctx, key)
	if err != nil {
		return false, err
	}
	if info.Token.Valid() {
		return false, nil
	}
	lease, err := locker.Acquire(ctx, key, j.sess.TTL(), nil)
	if errors.Is(err, fence.ErrHeld) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// The mark is the token the key now shows; freeing it at once is
	// only tidy, so a failure here changes nothing.
	_ = locker.Release(ctx, lease)
	return true, nil
}

// hold waits until the clock reaches until, or ctx ends (the lease was
// lost or the caller stopped). The session keeps renewing the lease
// meanwhile.
func (j *Job) hold(ctx context.Context, until time.Time) {
	d := until.Sub(j.s.clock.Now())
	if d <= 0 {
		return
	}
	t := j.s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-ctx.Done():
	}
}
