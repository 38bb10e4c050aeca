package fence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fencekit/fence/internal/backoff"
)

// WaitForever, as LockOptions.Wait, waits until ctx ends.
const WaitForever time.Duration = math.MaxInt64

// LockOptions say how long taking a lock waits for a busy key, the same
// way everywhere a lock is taken: Session.Lock, guard.Run, election,
// schedule and the SQL helpers. A nil *LockOptions is the zero value:
// try once.
type LockOptions struct {
	// Wait is how long to wait while another owner holds the key,
	// measured on the session's Clock. Zero tries once and never waits:
	// a busy key gets an error matching ErrHeld at once. A positive
	// duration waits up to it, then gives up with the last attempt's
	// error (matching ErrHeld when the key was still busy). WaitForever
	// waits until ctx ends. A negative duration is invalid.
	Wait time.Duration
}

// Lock takes key and returns a handle that the session's keepalive renews
// until Release, waiting as opts says while another owner holds the key:
// not at all by default (opts nil or Wait zero), up to opts.Wait, or until
// ctx ends (WaitForever). When it gives up on a busy key the error matches
// ErrHeld (a *HeldError with the holder's expiry where the store knows
// it).
//
// A waiting Lock does not poll on a backoff. It sleeps until one of: a
// handle of this process on the same Locker releases the key; the store
// notifies a release or a break (PostgreSQL: LISTEN/NOTIFY); the holder's
// lease expires, where the store says when; or SessionOptions.PollInterval
// passes (a crashed holder on a store that does not say when its lease
// ends). The callers of Lock in one process queue per Locker and key, and
// only the first in line asks the store, so they get the key in arrival
// order; across processes, a woken waiter asks at once, which keeps the
// order rough but starves no one. Store errors are retried with jittered
// backoff (SessionOptions.BackoffMin to BackoffMax) while the wait lasts.
//
// An attempt whose outcome is unknown (a timeout or store error after the
// request may have been sent) is reconciled by reading the record: every
// attempt of a call uses one fresh owner id, so a lease won by an attempt
// whose answer was lost is recognised and used, or released when too
// little of it is left. Invalid input (ErrInvalid) and corrupted records
// (ErrCorrupt) are returned at once.
func (s *Session) Lock(ctx context.Context, key string, opts *LockOptions) (*Handle, error) {
	var wait time.Duration
	if opts != nil {
		wait = opts.Wait
	}
	if wait < 0 {
		return nil, sessionInvalid("Wait", "%v is negative (WaitForever waits until ctx ends)", wait)
	}
	timeout := wait
	if wait == WaitForever {
		timeout = 0
	}
	if wait > 0 {
		var stop func()
		ctx, stop = s.untilClosed(ctx)
		defer stop()
	}
	h, err := s.acquire(ctx, key, wait > 0, timeout)
	if err == nil {
		select {
		case <-s.done: // closed while the key was taken: Close missed it
			_ = h.Release(ctx)
			return nil, fmt.Errorf("fence: lock %q: %w", key, ErrSessionClosed)
		default:
		}
	}
	return h, err
}

// releaseLease frees lease with a context bounded by ReleaseTimeout that
// keeps ctx's values but not its cancellation.
func (s *Session) releaseLease(ctx context.Context, lease Lease) error {
	return s.releaseIn(new(callCtx), ctx, lease)
}

// releaseIn is releaseLease, with c (zero) for the call's context.
func (s *Session) releaseIn(c *callCtx, ctx context.Context, lease Lease) error {
	now := time.Now()
	c.init(ctx, now, s.s.releaseTimeout, true)
	defer c.stop()
	if !s.sys {
		now = time.Time{}
	}
	return s.locker.releaseAt(c, lease, now)
}

// acquire gets a lease on key: once, or waiting (bounded by timeout when
// it is positive).
func (s *Session) acquire(ctx context.Context, key string, wait bool, timeout time.Duration) (*Handle, error) {
	select {
	case <-s.done:
		return nil, fmt.Errorf("fence: lock %q: %w", key, ErrSessionClosed)
	default:
	}
	clock := s.s.clock
	h := &Handle{s: s}    // the first attempt runs in h.acqCtx
	owner := NewOwnerID() // fresh per call: recognisable after an ambiguous attempt
	start := clock.Now()
	var giveUp time.Time
	if timeout > 0 {
		giveUp = start.Add(timeout)
	}
	var w *waiter
	var wake <-chan struct{}
	if wait {
		w = s.locker.lines.join(key)
		defer w.leave()
		if err := w.await(ctx, clock, giveUp); err != nil {
			return nil, s.acquireStopped(ctx, key, err, nil)
		}
		if s.locker.notify != nil {
			if c, stop, err := s.locker.notifyRelease(ctx, key); err == nil {
				wake = c
				defer stop()
			}
		}
	}
	// A lease that a re-read finds ours was won by an attempt whose answer
	// was lost; it cannot have started before the first such attempt
	// (since), nor before the last answer that showed no lease of ours
	// (floor: a busy attempt, or a re-read): a request that lands later
	// starts its lease later.
	var since, floor time.Time
	var lastErr error
	failures := 0
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, s.acquireStopped(ctx, key, nil, lastErr)
		}
		sent := start
		if attempt > 1 || wait {
			sent = clock.Now()
		}
		c := &h.acqCtx
		if attempt > 1 {
			c = new(callCtx)
		}
		lease, err := s.acquireOnce(c, ctx, key, owner, sent)
		var until time.Time // the holder's expiry, when the store says
		held, isHeld := errors.AsType[*HeldError](err)
		switch {
		case err == nil:
			s.obs().acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Acquired})
			return s.got(h, lease, sent, start, attempt), nil
		case errors.Is(err, ErrInvalid) || errors.Is(err, ErrCorrupt):
			s.obs().acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Failed, Err: err})
			return nil, err
		case isHeld && held.Owner != owner:
			floor = sent
			until = held.ValidUntil
			failures = 0
			s.obs().acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Busy, Err: err})
		case errors.Is(err, ErrHeld) && !isHeld:
			// Busy, and the backend does not say who holds it (perhaps
			// us, on a store that names no holder): no floor.
			failures = 0
			s.obs().acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Busy, Err: err})
		default:
			// A timeout or store error after the request may have been
			// sent, or our own owner id holding the key: an earlier
			// attempt may have won. Re-read the record.
			failures++
			if since.IsZero() {
				since = sent
			}
			lease, found, readSent := s.reconcileWithin(ctx, key, owner, later(since, floor))
			switch {
			case found == foundOurs && clock.Now().Before(lease.ValidUntil.Add(-s.s.safetyMargin)):
				s.obs().acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Acquired})
				s.got(h, lease, lease.ValidUntil.Add(-s.s.ttl), start, attempt)
				if ctx.Err() != nil {
					_ = h.Release(ctx)
					return nil, s.acquireStopped(ctx, key, nil, err)
				}
				return h, nil
			case found == foundOurs:
				// Won so long ago that work could not run safely: let it
				// go, and keep the bounds (the release may be refused,
				// and then the same lease is found again until it
				// expires).
				_ = s.releaseLease(ctx, lease)
				err = fmt.Errorf("%w (a lease won by an attempt whose answer was lost had too little time left)", err)
			case found == foundOthers:
				floor = readSent
			}
			s.obs().acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Failed, Err: err})
			err = fmt.Errorf("fence: lock %q: %w", key, err)
		}
		lastErr = err
		if !wait {
			return nil, err
		}
		now := clock.Now()
		var sleep time.Duration
		if failures > 0 {
			sleep = backoff.Policy{First: s.s.backoffMin, Max: s.s.backoffMax}.Delay(failures)
		} else {
			sleep = backoff.Jitter(s.s.poll)
			if !until.IsZero() && until.Sub(now) < sleep {
				// The holder's lease ends before the next poll: try just
				// after it does.
				sleep = max(until.Sub(now), 0) + time.Millisecond
			}
		}
		if !giveUp.IsZero() {
			remaining := giveUp.Sub(now)
			if remaining <= 0 {
				return nil, fmt.Errorf("fence: gave up on %q after %v and %d attempts: %w", key, timeout, attempt, err)
			}
			sleep = min(sleep, remaining)
		}
		var kick <-chan struct{}
		if w != nil {
			kick = w.kick
		}
		t := clock.NewTimer(sleep)
		select {
		case <-t.C():
		case <-wake:
			t.Stop()
		case <-kick:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return nil, s.acquireStopped(ctx, key, nil, lastErr)
		}
	}
}

// acquireOnce makes one attempt to acquire key for owner, sent at sent
// on the session's clock, bounded by CallTimeout, with c (zero) for the
// call's context.
func (s *Session) acquireOnce(c *callCtx, ctx context.Context, key, owner string, sent time.Time) (Lease, error) {
	if !s.sys {
		c.init(ctx, time.Now(), s.s.callTimeout, false)
		defer c.stop()
		return s.locker.acquireAt(c, key, s.s.ttl, owner, time.Time{})
	}
	c.init(ctx, sent, s.s.callTimeout, false)
	defer c.stop()
	return s.locker.acquireAt(c, key, s.s.ttl, owner, sent)
}

// got makes h the handle of a lease obtained after attempts attempts by
// a call sent at sent, and starts renewing it.
func (s *Session) got(h *Handle, lease Lease, sent, start time.Time, attempts int) *Handle {
	now := sent // the first renewal falls due RenewInterval after it
	if !s.sys || s.obs() != nil {
		now = s.s.clock.Now()
	}
	h.key, h.owner, h.token, h.acquiredAt = lease.Key, lease.Owner, lease.Token, now
	h.ttl, h.validUntil = lease.TTL, lease.ValidUntil
	s.obs().acquired(AcquiredEvent{Lease: lease, Attempts: attempts, Latency: now.Sub(start)})
	s.track(h, sent, now)
	return h
}

// finding is what a re-read after an ambiguous acquire showed.
type finding int

const (
	foundNothing finding = iota // the read failed
	foundOurs                   // owner holds the key
	foundOthers                 // the key is free or held by another owner
)

// reconcileAcquire reads key after an ambiguous attempt and returns the
// lease when the record shows owner holding it, and the send time of the
// read. since is the send time of the earliest attempt that may have won
// it: the lease cannot have started before, so it is valid until since +
// TTL, or until the expiry the record shows if that is earlier. The read
// runs even when ctx is done, so that a lease won by a cancelled call can
// be released.
func (s *Session) reconcileAcquire(ctx context.Context, key, owner string, since time.Time) (Lease, finding, time.Time) {
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.s.callTimeout)
	defer cancel()
	sent := s.s.clock.Now()
	info, err := s.locker.Inspect(readCtx, key)
	switch {
	case err != nil:
		return Lease{}, foundNothing, sent
	case !info.Held || info.Owner != owner || !info.Token.Valid():
		return Lease{}, foundOthers, sent
	}
	until := since.Add(s.s.ttl)
	if !info.ValidUntil.IsZero() && info.ValidUntil.Before(until) {
		until = info.ValidUntil
	}
	return Lease{Key: key, Owner: owner, Token: info.Token, TTL: s.s.ttl, ValidUntil: until}, foundOurs, sent
}

// reconcileWithin is reconcileAcquire bounded by ctx: when ctx ends
// before the read answers (a store that hangs), it reports foundNothing
// at once and leaves the read to finish in the background, which releases
// the lease if it shows owner holding it. So a Lock returns once its ctx
// is done, and a lease its lost attempt won is still given back.
func (s *Session) reconcileWithin(ctx context.Context, key, owner string, since time.Time) (Lease, finding, time.Time) {
	type read struct {
		lease Lease
		found finding
		sent  time.Time
	}
	done := make(chan read, 1)
	go func() {
		l, f, t := s.reconcileAcquire(ctx, key, owner, since)
		done <- read{l, f, t}
	}()
	select {
	case r := <-done:
		return r.lease, r.found, r.sent
	case <-ctx.Done():
		go func() {
			if r := <-done; r.found == foundOurs {
				_ = s.releaseLease(ctx, r.lease)
			}
		}()
		return Lease{}, foundNothing, s.s.clock.Now()
	}
}

// acquireStopped is the error of an acquisition ended by ctx (or, with
// cause set, by the wait in line).
func (s *Session) acquireStopped(ctx context.Context, key string, cause, last error) error {
	if cause == nil {
		cause = context.Cause(ctx)
	}
	err := fmt.Errorf("fence: lock %q: %w", key, cause)
	if last != nil {
		err = fmt.Errorf("%w (last attempt: %v)", err, last)
	}
	return err
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
