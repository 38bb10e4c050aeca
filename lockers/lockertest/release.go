package lockertest

import (
	"testing"

	"github.com/fencekit/fence"
)

// releaseCases test Locker.Release: it frees one's own lease only (compare
// and delete on owner and token), answers ErrNotHeld otherwise and then
// leaves the new holder's lease in place, and keeps the counter.
var releaseCases = []testCase{
	{"FreesTheKey", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		release(t, l, lease)
		s.wantFree(t, other, lease)
		s.acquireAfter(t, other, lease.Key, lease.Token, "a release")
	}},
	{"TwiceFails", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		release(t, l, lease)
		wantErr(t, l.Release(t.Context(), lease), fence.ErrNotHeld, "a second Release of a lease")
		s.wantFree(t, other, lease)
	}},
	{"AfterExpiryFails", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.ShortTTL, nil)
		s.h.Expire(t)
		wantErr(t, l.Release(t.Context(), lease), fence.ErrNotHeld, "Release of an expired lease")
		s.wantFree(t, other, lease)
		s.acquireAfter(t, other, lease.Key, lease.Token, "an expiry")
	}},
	{"StaleAfterTakeoverLeavesTheNewHolder", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		stale := s.acquire(t, l, s.key(t), s.h.ShortTTL, nil)
		s.h.Expire(t)
		lease := s.acquireAfter(t, other, stale.Key, stale.Token, "an expiry")
		wantErr(t, l.Release(t.Context(), stale), fence.ErrNotHeld, "Release of a lease taken over")
		s.wantHolder(t, l, lease)
		lease = s.renew(t, other, lease)
		s.wantHolder(t, s.locker(t), lease)
	}},
	{"StaleAfterBreakLeavesTheNewHolder", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		stale := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		breakKey(t, other, stale.Key)
		lease := s.acquireAfter(t, other, stale.Key, stale.Token, "a Break")
		wantErr(t, l.Release(t.Context(), stale), fence.ErrNotHeld, "Release of a broken lease after another owner took the key")
		s.wantHolder(t, l, lease)
		s.renew(t, other, lease)
	}},
	{"ComparesOwnerAndToken", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.heldTwice(t, l)
		for _, f := range forgeries(lease) {
			wantErr(t, other.Release(t.Context(), f.lease), fence.ErrNotHeld, "Release of the holder's lease with "+f.name)
			s.wantHolder(t, other, lease)
		}
		s.renew(t, l, lease)
		release(t, l, lease)
	}},
	{"UnknownKeyFails", func(t *testing.T, s *suite) {
		l := s.locker(t)
		key := s.key(t)
		err := l.Release(t.Context(), fence.Lease{Key: key, Owner: fence.NewOwnerID(), Token: 1, TTL: s.h.TTL})
		wantErr(t, err, fence.ErrNotHeld, "Release of a lease on a key never acquired")
		s.wantNeverAcquired(t, l, key)
	}},
}
