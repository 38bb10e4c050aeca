package schedule

import (
	"context"
	"errors"
	"fmt"
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
// run the same Job (same name, interval, offset and RetryWithin) on the
// same lock store; with RetryWithin, again until a run of the window
// finishes. Create it with New; it is safe for concurrent use.
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
// the outcome to Options.Observer too. The error is nil for Busy, Done,
// Missed and a run without error; for Ran and Retried it is the job's
// error or the loss of the lease; for Failed, why the attempt failed.
// With RetryWithin, an attempt that finds the job's lock busy waits for
// it until the window's allowance ends (woken by the release where the
// store notifies), then looks at the window's marks. Attempt returns after
// the lock is released, LockAtLeastFor after the run started at the
// earliest. It is for callers that schedule attempts themselves, such as
// a cron job started on every replica; Run calls it at each window's
// start.
func (j *Job) Attempt(ctx context.Context) (Outcome, error) {
	return j.attempt(ctx, j.Window(j.s.clock.Now()))
}

func (j *Job) attempt(ctx context.Context, window time.Time) (Outcome, error) {
	var (
		got      *fence.Handle // the job lock, once taken
		out      Outcome       // what the look under the lock decided
		finished bool          // fn returned in time and the window is marked done
	)
	err := guard.Run(ctx, j.sess, j.name, func(ctx context.Context, h *fence.Handle) error {
		got = h
		start := j.s.clock.Now()
		var err error
		if out, err = j.look(ctx, window, h); err != nil || (out != Ran && out != Retried) {
			return err
		}
		err = j.fn(ctx, window, h)
		if ctx.Err() == nil {
			if _, merr := j.mark(ctx, doneKey(j.name, window), false); merr != nil {
				err = errors.Join(err, fmt.Errorf("schedule: marking window %s done: %w", window.Format(time.RFC3339Nano), merr))
			} else {
				finished = true
			}
		}
		j.hold(ctx, start.Add(j.s.atLeast))
		return err
	}, j.waitFor(window))
	took := got != nil
	var lease fence.Lease
	if took {
		lease = got.Lease() // as last renewed
	}
	switch {
	case out == Ran || out == Retried:
	case err == nil && took:
		// Done or Missed
	case err != nil && !took && errors.Is(err, fence.ErrHeld):
		out, err = Busy, nil
	default:
		out = Failed
	}
	j.s.obs.attempted(AttemptEvent{Name: j.name, Window: window, Outcome: out, Finished: finished, Lease: lease, Err: err})
	return out, err
}

// waitFor says how long an attempt at window waits for the job's lock:
// until the window's allowance ends, with RetryWithin; else not at all.
func (j *Job) waitFor(window time.Time) *fence.LockOptions {
	if j.s.retry == 0 {
		return nil
	}
	d := window.Add(j.s.retry).Sub(j.s.clock.Now())
	if d <= 0 {
		return nil
	}
	return &fence.LockOptions{Wait: d}
}

// look decides, under the job's lock h, what the attempt does with
// window: Ran (the window was not started; it is now marked started),
// Retried (started, not done, within its allowance), Missed (started,
// not done, past its allowance; it is now marked done) or Done. An error
// means the store could not tell, or the outcome of a mark is unknown
// (the attempt is then Failed: at most once wins over at least once).
func (j *Job) look(ctx context.Context, window time.Time, h *fence.Handle) (Outcome, error) {
	fresh, err := j.mark(ctx, markKey(j.name, window), true)
	switch {
	case err != nil:
		return 0, err
	case fresh:
		if j.s.retry > 0 {
			j.reportMissed(ctx, window.Add(-j.s.interval), h)
		}
		return Ran, nil
	case j.s.retry == 0:
		return Done, nil
	}
	info, err := j.sess.Locker().Inspect(ctx, doneKey(j.name, window))
	switch {
	case err != nil:
		return 0, err
	case info.Token.Valid():
		return Done, nil
	case !j.s.clock.Now().After(window.Add(j.s.retry)):
		return Retried, nil
	}
	if _, err = j.mark(ctx, doneKey(j.name, window), false); err != nil {
		return 0, err
	}
	return Missed, nil
}

// reportMissed reports window as Missed, and marks it done so that it is
// reported once, if it was started and not done. The replica that starts
// the next window calls it under the job's lock h. A store error leaves
// it unreported here; a replica that takes the job's lock in that window
// would report it.
func (j *Job) reportMissed(ctx context.Context, window time.Time, h *fence.Handle) {
	locker := j.sess.Locker()
	if info, err := locker.Inspect(ctx, doneKey(j.name, window)); err != nil || info.Token.Valid() {
		return // unknown, or done (the usual case: one call)
	}
	if info, err := locker.Inspect(ctx, markKey(j.name, window)); err != nil || !info.Token.Valid() {
		return // unknown, or not started: no replica was there to run it
	}
	if fresh, err := j.mark(ctx, doneKey(j.name, window), false); err != nil || !fresh {
		return
	}
	j.s.obs.attempted(AttemptEvent{Name: j.name, Window: window, Outcome: Missed, Lease: h.Lease()})
}

// mark marks key: it acquires it and at once releases it, so that it
// shows a token in Inspect forever after. It runs under the job's lock.
// With check, it first looks whether key is marked already, and reports
// false, with no error, when it is or is being marked by another
// replica; without check it reports true once key is marked. An error
// means the store could not tell or the outcome of the mark is unknown.
func (j *Job) mark(ctx context.Context, key string, check bool) (bool, error) {
	locker := j.sess.Locker()
	if check {
		info, err := locker.Inspect(ctx, key)
		if err != nil {
			return false, err
		}
		if info.Token.Valid() {
			return false, nil
		}
	}
	lease, err := locker.Acquire(ctx, key, j.sess.TTL(), nil)
	if errors.Is(err, fence.ErrHeld) {
		return !check, nil // its holder has marked it
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
