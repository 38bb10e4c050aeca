package guard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/backoff"
)

// acquired is a lease and the send time of the call that got it.
type acquired struct {
	lease fence.Lease
	sent  time.Time
	at    time.Time // when the guard learned it holds the lease
}

// acquire gets a lease on key: once, or until AcquireTimeout in wait mode.
func (g *Guard) acquire(ctx context.Context, key string) (acquired, error) {
	s := &g.s
	owner := fence.NewOwnerID() // fresh per Do: recognisable after an ambiguous attempt
	start := s.clock.Now()
	giveUp := start.Add(s.acquireTimeout)
	// A lease that a re-read finds ours was won by an attempt whose answer
	// was lost; it cannot have started before the first such attempt
	// (since), nor before the last answer that showed no lease of ours
	// (floor: a busy attempt, or a re-read): a request that lands later
	// starts its lease later.
	var since, floor time.Time
	var lastErr error
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return acquired{}, g.acquireStopped(ctx, key, lastErr)
		}
		sent := s.clock.Now()
		callCtx, cancel := context.WithTimeout(ctx, s.callTimeout)
		lease, err := g.locker.Acquire(callCtx, key, s.ttl, &fence.AcquireOptions{Owner: owner})
		cancel()
		var held *fence.HeldError
		switch {
		case err == nil:
			s.obs.acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Acquired})
			return g.got(lease, sent, start, attempt), nil
		case errors.Is(err, fence.ErrInvalid) || errors.Is(err, fence.ErrCorrupt):
			s.obs.acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Failed, Err: err})
			return acquired{}, err
		case errors.As(err, &held) && held.Owner != owner:
			floor = sent
			s.obs.acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Busy, Err: err})
		case errors.Is(err, fence.ErrHeld) && held == nil:
			// Busy, and the backend does not say who holds it (perhaps
			// us, on a store that names no holder): no floor.
			s.obs.acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Busy, Err: err})
		default:
			// A timeout or store error after the request may have been
			// sent, or our own owner id holding the key: an earlier
			// attempt may have won. Re-read the record.
			if since.IsZero() {
				since = sent
			}
			lease, found, readSent := g.reconcileAcquire(ctx, key, owner, later(since, floor))
			switch {
			case found == foundOurs && s.clock.Now().Before(lease.ValidUntil.Add(-s.safetyMargin)):
				s.obs.acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Acquired})
				a := g.got(lease, lease.ValidUntil.Add(-s.ttl), start, attempt)
				if ctx.Err() != nil {
					g.release(ctx, a)
					return acquired{}, g.acquireStopped(ctx, key, err)
				}
				return a, nil
			case found == foundOurs:
				// Won so long ago that fn could not run safely: let it
				// go, and keep the bounds (the release may be refused,
				// and then the same lease is found again until it
				// expires).
				_ = g.releaseLease(ctx, lease)
				err = fmt.Errorf("%w (a lease won by an attempt whose answer was lost had too little time left)", err)
			case found == foundOthers:
				floor = readSent
			}
			s.obs.acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Failed, Err: err})
			err = fmt.Errorf("guard: acquire %q: %w", key, err)
		}
		lastErr = err
		if s.acquireTimeout == 0 {
			return acquired{}, err
		}
		remaining := giveUp.Sub(s.clock.Now())
		if remaining <= 0 {
			return acquired{}, fmt.Errorf("guard: gave up on %q after %v and %d attempts: %w", key, s.acquireTimeout, attempt, err)
		}
		t := s.clock.NewTimer(min(backoff.Policy{First: s.backoffMin, Max: s.backoffMax}.Delay(attempt), remaining))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return acquired{}, g.acquireStopped(ctx, key, lastErr)
		}
	}
}

// got reports a lease obtained after attempt attempts.
func (g *Guard) got(lease fence.Lease, sent, start time.Time, attempts int) acquired {
	now := g.s.clock.Now()
	g.s.obs.acquired(AcquiredEvent{Lease: lease, Attempts: attempts, Latency: now.Sub(start)})
	return acquired{lease: lease, sent: sent, at: now}
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
func (g *Guard) reconcileAcquire(ctx context.Context, key, owner string, since time.Time) (fence.Lease, finding, time.Time) {
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.s.callTimeout)
	defer cancel()
	sent := g.s.clock.Now()
	info, err := g.locker.Inspect(readCtx, key)
	switch {
	case err != nil:
		return fence.Lease{}, foundNothing, sent
	case !info.Held || info.Owner != owner || !info.Token.Valid():
		return fence.Lease{}, foundOthers, sent
	}
	until := since.Add(g.s.ttl)
	if !info.ValidUntil.IsZero() && info.ValidUntil.Before(until) {
		until = info.ValidUntil
	}
	return fence.Lease{Key: key, Owner: owner, Token: info.Token, TTL: g.s.ttl, ValidUntil: until}, foundOurs, sent
}

// acquireStopped is the error of an acquisition ended by ctx.
func (g *Guard) acquireStopped(ctx context.Context, key string, last error) error {
	err := fmt.Errorf("guard: acquire %q: %w", key, context.Cause(ctx))
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
