package guard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
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
	var firstAmbiguous time.Time // send time of the earliest attempt with an unknown outcome
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
		case errors.As(err, &held) && held.Holder != owner:
			s.obs.acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Busy, Err: err})
		case errors.Is(err, fence.ErrHeld) && held == nil:
			// Busy, and the backend does not say who holds it.
			s.obs.acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Busy, Err: err})
		default:
			// A timeout or store error after the request may have been
			// sent, or our own owner id holding the key: an earlier
			// attempt may have won. Re-read the record.
			if firstAmbiguous.IsZero() {
				firstAmbiguous = sent
			}
			if lease, ok := g.reconcileAcquire(ctx, key, owner, firstAmbiguous); ok {
				s.obs.acquireAttempt(AcquireAttemptEvent{Key: key, Attempt: attempt, Outcome: Acquired})
				a := g.got(lease, firstAmbiguous, start, attempt)
				if ctx.Err() != nil {
					g.release(ctx, a)
					return acquired{}, g.acquireStopped(ctx, key, err)
				}
				return a, nil
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
		t := s.clock.NewTimer(min(backoff(attempt, s.backoffMin, s.backoffMax), remaining))
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

// reconcileAcquire reads key after an ambiguous attempt and returns the
// lease when the record shows owner holding it. sent is the send time of
// the earliest ambiguous attempt: the lease cannot have started before it.
// The read runs even when ctx is done, so that a lease won by a cancelled
// call can be released.
func (g *Guard) reconcileAcquire(ctx context.Context, key, owner string, sent time.Time) (fence.Lease, bool) {
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.s.callTimeout)
	defer cancel()
	info, err := g.locker.Inspect(readCtx, key)
	if err != nil || !info.Held || info.Owner != owner || !info.Token.Valid() {
		return fence.Lease{}, false
	}
	return fence.Lease{Key: key, Owner: owner, Token: info.Token, TTL: g.s.ttl, ValidUntil: sent.Add(g.s.ttl)}, true
}

// acquireStopped is the error of an acquisition ended by ctx.
func (g *Guard) acquireStopped(ctx context.Context, key string, last error) error {
	err := fmt.Errorf("guard: acquire %q: %w", key, context.Cause(ctx))
	if last != nil {
		err = fmt.Errorf("%w (last attempt: %v)", err, last)
	}
	return err
}
