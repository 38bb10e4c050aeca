package fence

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fencekit/fence/internal/backoff"
)

// LockAll takes every key of keys, all or nothing, and returns one handle
// per key, in the order of keys: each with its own key's Token, so that
// each resource keeps checking the token of its own key (a transfer
// between two accounts writes each account with its account's token). The
// session renews the handles with its other leases; each is lost on its
// own, as the store says, and each is released on its own (guard.RunAll
// runs a function under them all and cancels it when any is lost).
//
// On a store that takes several keys in one atomic operation (memory,
// PostgreSQL, MySQL, SQLite, etcd, DynamoDB, Redis on one node,
// ZooKeeper) LockAll is that one operation: it never holds some keys
// while others are busy, and a waiting LockAll holds nothing. Elsewhere
// it takes the keys one at a time in one global order (sorted), waiting
// for each as opts says, and releases what it took when it gives up; as
// every caller takes overlapping keys in the same order, two callers
// never deadlock, and a waiter makes progress as keys come free.
//
// It waits as Lock does (opts nil: try once; Wait: up to that long in
// all, for the whole set). When it gives up on a busy key the error
// matches ErrHeld and names that key. Closing the session ends a waiting
// LockAll with an error matching ErrSessionClosed, holding nothing. keys must be distinct and not empty (ErrInvalid).
func (s *Session) LockAll(ctx context.Context, keys []string, opts *LockOptions) ([]*Handle, error) {
	var wait time.Duration
	if opts != nil {
		wait = opts.Wait
	}
	if wait < 0 {
		return nil, sessionInvalid("Wait", "%v is negative (WaitForever waits until ctx ends)", wait)
	}
	if len(keys) == 0 {
		return nil, sessionInvalid("keys", "no key to lock")
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return nil, sessionInvalid("keys", "%q appears twice", sorted[i])
		}
	}
	for _, k := range sorted {
		if err := s.locker.checkKey(k); err != nil {
			return nil, s.locker.fail(ctx, "acquire", k, err)
		}
	}
	select {
	case <-s.done:
		return nil, fmt.Errorf("fence: lock %q: %w", keys[0], ErrSessionClosed)
	default:
	}
	var giveUp time.Time
	if wait > 0 && wait != WaitForever {
		giveUp = s.s.clock.Now().Add(wait)
	}
	if wait > 0 {
		var stop func()
		ctx, stop = s.untilClosed(ctx)
		defer stop()
	}
	var got []*Handle
	var err error
	if len(sorted) > 1 && s.locker.multi != nil {
		got, err = s.lockAtomic(ctx, sorted, wait > 0, giveUp)
		if errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, ErrInvalid) {
			got, err = s.lockInOrder(ctx, sorted, wait > 0, giveUp)
		}
	} else {
		got, err = s.lockInOrder(ctx, sorted, wait > 0, giveUp)
	}
	if err != nil {
		return nil, err
	}
	select {
	case <-s.done: // closed while the last key was taken: Close missed these
		s.releaseAll(ctx, got)
		return nil, fmt.Errorf("fence: lock %q: %w", keys[0], ErrSessionClosed)
	default:
	}
	byKey := make(map[string]*Handle, len(got))
	for _, h := range got {
		byKey[h.key] = h
	}
	out := make([]*Handle, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out, nil
}

// lockInOrder takes sorted one key at a time, and releases what it took
// when one fails.
func (s *Session) lockInOrder(ctx context.Context, sorted []string, wait bool, giveUp time.Time) ([]*Handle, error) {
	got := make([]*Handle, 0, len(sorted))
	for _, k := range sorted {
		keyWait, timeout := wait, time.Duration(0)
		if wait && !giveUp.IsZero() {
			timeout = giveUp.Sub(s.s.clock.Now())
			if timeout <= 0 {
				keyWait = false // out of time: one last try
			}
		}
		h, err := s.acquire(ctx, k, keyWait, timeout)
		if err != nil {
			s.releaseAll(ctx, got)
			return nil, err
		}
		got = append(got, h)
	}
	return got, nil
}

// releaseAll releases hs, last first.
func (s *Session) releaseAll(ctx context.Context, hs []*Handle) {
	for i := len(hs) - 1; i >= 0; i-- {
		_ = hs[i].Release(ctx)
	}
}

// lockAtomic takes sorted in one atomic operation of the store per
// attempt, waiting (until giveUp, when not zero) for the busy key named
// by the last attempt.
func (s *Session) lockAtomic(ctx context.Context, sorted []string, wait bool, giveUp time.Time) ([]*Handle, error) {
	clock := s.s.clock
	start := clock.Now()
	owners := make([]string, len(sorted))
	for i := range owners {
		owners[i] = NewOwnerID()
	}
	var (
		lastErr  error
		failures int
		since    time.Time // the first ambiguous attempt
		busy     string    // the key the last attempt found busy
		looked   bool      // the last attempt came at once after subscribing
		w        *waiter   // our place in busy's line
		wake     <-chan struct{}
		stopWake func()
	)
	leave := func() {
		if w != nil {
			w.leave()
			w = nil
		}
		if stopWake != nil {
			stopWake()
			stopWake, wake = nil, nil
		}
	}
	defer leave()
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, s.acquireStopped(ctx, sorted[0], nil, lastErr)
		}
		again := looked
		looked = false
		sent := clock.Now()
		leases, err := s.acquireAllOnce(ctx, sorted, owners, sent)
		var until time.Time
		held, isHeld := errors.AsType[*HeldError](err)
		switch {
		case err == nil:
			return s.gotAll(leases, sent, start, attempt), nil
		case errors.Is(err, ErrInvalid) || errors.Is(err, ErrCorrupt) || errors.Is(err, errors.ErrUnsupported):
			return nil, err
		case isHeld && held.Key != "" && !slices.Contains(owners, held.Owner):
			failures = 0
			until = held.ValidUntil
			if held.Key != busy {
				leave()
				busy = held.Key
				if wait {
					w = s.locker.lines.join(busy)
					if s.locker.notify != nil {
						if c, stop, nerr := s.locker.notifyRelease(ctx, busy); nerr == nil {
							wake, stopWake = c, stop
						}
					}
					if werr := w.await(ctx, clock, giveUp); werr != nil {
						return nil, s.acquireStopped(ctx, busy, werr, err)
					}
					if !again {
						lastErr, looked = err, true
						continue // subscribed now: look again before sleeping
					}
				}
			}
		case errors.Is(err, ErrHeld) && (!isHeld || held.Owner == ""):
			// Busy, and the store does not say which key: poll.
			failures = 0
		default:
			// Unknown outcome: the operation may have taken every key.
			failures++
			if since.IsZero() {
				since = sent
			}
			if hs := s.reconcileAll(ctx, sorted, owners, since, start, attempt); hs != nil {
				return hs, nil
			}
			err = fmt.Errorf("fence: lock %q and %d more: %w", sorted[0], len(sorted)-1, err)
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
				sleep = max(until.Sub(now), 0) + time.Millisecond
			}
		}
		if !giveUp.IsZero() {
			remaining := giveUp.Sub(now)
			if remaining <= 0 {
				return nil, fmt.Errorf("fence: gave up on %q after %d attempts: %w", busy, attempt, err)
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
			return nil, s.acquireStopped(ctx, sorted[0], nil, lastErr)
		}
	}
}

// acquireAllOnce makes one atomic attempt at sorted for owners, sent at
// sent on the session's clock, bounded by CallTimeout.
func (s *Session) acquireAllOnce(ctx context.Context, sorted, owners []string, sent time.Time) ([]Lease, error) {
	c := new(callCtx)
	c.init(ctx, time.Now(), s.s.callTimeout, false)
	defer c.stop()
	return s.locker.acquireAllAt(c, sorted, owners, s.s.ttl, sent)
}

// gotAll makes handles of leases won by one atomic attempt.
func (s *Session) gotAll(leases []Lease, sent, start time.Time, attempts int) []*Handle {
	hs := make([]*Handle, len(leases))
	for i, l := range leases {
		s.obs().acquireAttempt(AcquireAttemptEvent{Key: l.Key, Attempt: attempts, Outcome: Acquired})
		hs[i] = s.got(&Handle{s: s}, l, sent, start, attempts)
	}
	return hs
}

// reconcileAll reads every key after an attempt whose outcome is unknown:
// when owners hold them all with time enough left, it returns their
// handles; otherwise it releases whatever owners hold (an atomic store
// never leaves a part, but a reader may) and returns nil.
func (s *Session) reconcileAll(ctx context.Context, sorted, owners []string, since, start time.Time, attempt int) []*Handle {
	leases := make([]Lease, 0, len(sorted))
	all := true
	for i, k := range sorted {
		lease, found, _ := s.reconcileWithin(ctx, k, owners[i], since)
		if found == foundOurs {
			leases = append(leases, lease)
		} else {
			all = false
		}
	}
	fresh := true
	for _, l := range leases {
		if !s.s.clock.Now().Before(l.ValidUntil.Add(-s.s.safetyMargin)) {
			fresh = false
		}
	}
	if all && fresh && ctx.Err() == nil {
		hs := make([]*Handle, len(leases))
		for i, l := range leases {
			hs[i] = s.got(&Handle{s: s}, l, l.ValidUntil.Add(-s.s.ttl), start, attempt)
		}
		return hs
	}
	for _, l := range leases {
		_ = s.releaseLease(ctx, l)
	}
	return nil
}

// untilClosed returns a context derived from ctx that also ends, with
// ErrSessionClosed as its cause, when the session is closed, so that a
// waiting call returns at Close; stop releases its goroutine.
func (s *Session) untilClosed(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-s.done:
			cancel(ErrSessionClosed)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}
