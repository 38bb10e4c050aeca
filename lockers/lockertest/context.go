package lockertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// contextCases test that every method honours ctx: with a ctx already done
// it returns an error wrapping ctx.Err(). Such an error is ambiguous (the
// store may have applied the request), so the cases require only that
// the key is left in one of the two states the call could produce and that
// the contract holds from there on.
var contextCases = []testCase{
	{"Acquire", func(t *testing.T, s *suite) {
		forEachDoneContext(t, func(t *testing.T, ctx context.Context) {
			l, other := s.locker(t), s.locker(t)
			before := s.acquire(t, l, s.key(t), s.h.TTL, nil)
			release(t, l, before)
			owner := fence.NewOwnerID()
			lease, err := l.Acquire(ctx, before.Key, s.h.ShortTTL, &fence.AcquireOptions{Owner: owner})
			wantErr(t, err, ctx.Err(), "Acquire with a done ctx")
			if lease != (fence.Lease{}) {
				t.Errorf("Acquire with a done ctx returned an error and a lease %+v; want the zero Lease", lease)
			}
			// Either nothing happened, or the Acquire took the key for
			// owner with a higher token (the lease may have expired
			// since).
			info := s.inspect(t, other, before.Key)
			last := before.Token
			switch {
			case info.Owner == before.Owner && info.Token == before.Token && !info.Held:
			case info.Owner == owner && info.Token > before.Token:
				last = info.Token
			default:
				t.Fatalf("after an Acquire with a done ctx, Inspect = Held %v, Owner %q, Token %d; "+
					"want the key as before (free, owner %q, token %d) or taken by owner %q with a higher token",
					info.Held, info.Owner, info.Token, before.Owner, before.Token, owner)
			}
			s.h.Expire(t)
			s.acquireAfter(t, other, before.Key, last, "an Acquire with a done ctx and an expiry")
		})
	}},
	{"Renew", func(t *testing.T, s *suite) {
		forEachDoneContext(t, func(t *testing.T, ctx context.Context) {
			l, other := s.locker(t), s.locker(t)
			lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
			renewed, err := l.Renew(ctx, lease)
			wantErr(t, err, ctx.Err(), "Renew with a done ctx")
			if renewed != (fence.Lease{}) {
				t.Errorf("Renew with a done ctx returned an error and a lease %+v; want the zero Lease", renewed)
			}
			// Renewed or not, the lease is still held.
			s.wantHolder(t, other, lease)
			s.renew(t, l, lease)
		})
	}},
	{"Release", func(t *testing.T, s *suite) {
		forEachDoneContext(t, func(t *testing.T, ctx context.Context) {
			l, other := s.locker(t), s.locker(t)
			lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
			wantErr(t, l.Release(ctx, lease), ctx.Err(), "Release with a done ctx")
			// Released or not; a retry settles it.
			if info := s.inspect(t, other, lease.Key); info.Held {
				s.wantHolder(t, other, lease)
			} else {
				s.wantFree(t, other, lease)
			}
			if err := l.Release(t.Context(), lease); err != nil && !errors.Is(err, fence.ErrNotHeld) {
				t.Fatalf("a retry of an ambiguous Release returned %v; want nil or an error matching %v", err, fence.ErrNotHeld)
			}
			s.wantFree(t, other, lease)
			s.acquireAfter(t, other, lease.Key, lease.Token, "a Release with a done ctx and its retry")
		})
	}},
	{"Break", func(t *testing.T, s *suite) {
		forEachDoneContext(t, func(t *testing.T, ctx context.Context) {
			l, operator := s.locker(t), s.locker(t)
			lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
			wantErr(t, operator.Break(ctx, lease.Key), ctx.Err(), "Break with a done ctx")
			if info := s.inspect(t, operator, lease.Key); info.Held {
				s.wantHolder(t, operator, lease)
			} else {
				s.wantFree(t, operator, lease)
			}
			breakKey(t, operator, lease.Key)
			s.acquireAfter(t, operator, lease.Key, lease.Token, "a Break with a done ctx and its retry")
		})
	}},
	{"Inspect", func(t *testing.T, s *suite) {
		forEachDoneContext(t, func(t *testing.T, ctx context.Context) {
			l := s.locker(t)
			lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
			info, err := l.Inspect(ctx, lease.Key)
			wantErr(t, err, ctx.Err(), "Inspect with a done ctx")
			if info != (fence.LockInfo{}) {
				t.Errorf("Inspect with a done ctx returned an error and %+v; want the zero LockInfo", info)
			}
		})
	}},
}

// forEachDoneContext runs f in a subtest per way a ctx can be done before
// the call: cancelled (context.Canceled) and past its deadline
// (context.DeadlineExceeded).
func forEachDoneContext(t *testing.T, f func(t *testing.T, ctx context.Context)) {
	t.Helper()
	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		f(t, ctx)
	})
	t.Run("PastDeadline", func(t *testing.T) {
		ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
		defer cancel()
		f(t, ctx)
	})
}
