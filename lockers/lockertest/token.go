package lockertest

import (
	"testing"

	"github.com/fencekit/fence"
)

// tokenCases test the sentence on fence.Token: for one key, every
// successful acquisition returns a token strictly greater than every token
// issued before it, across release, expiry, takeover and Break; renewal
// keeps it; 0 is never issued (every lease the suite gets is checked for
// that).
var tokenCases = []testCase{
	{"IncreasesAcrossReleaseExpiryTakeoverAndBreak", func(t *testing.T, s *suite) {
		a, b := s.locker(t), s.locker(t)
		key := s.key(t)
		lease := s.acquire(t, a, key, s.h.TTL, nil)
		release(t, a, lease)
		lease = s.acquireAfter(t, b, key, lease.Token, "a release")
		renewed := s.renew(t, b, lease)
		release(t, b, renewed)
		short := s.acquire(t, a, key, s.h.ShortTTL, nil)
		if short.Token <= lease.Token {
			t.Fatalf("Acquire(%q) after a renewal and a release returned token %d; want more than %d", key, short.Token, lease.Token)
		}
		s.h.Expire(t)
		lease = s.acquireAfter(t, b, key, short.Token, "an expiry (a takeover by another owner)")
		breakKey(t, a, key)
		lease = s.acquireAfter(t, a, key, lease.Token, "a Break of a held key")
		release(t, a, lease)
		breakKey(t, b, key)
		s.acquireAfter(t, b, key, lease.Token, "a release and a Break of the free key")
	}},
	{"SameOwnerGetsANewTokenAfterExpiry", func(t *testing.T, s *suite) {
		// Re-acquiring after expiry with the same owner id is a new
		// lease: the old one (same owner, old token) is dead.
		l, other := s.locker(t), s.locker(t)
		opts := &fence.AcquireOptions{Owner: fence.NewOwnerID()}
		old := s.acquire(t, l, s.key(t), s.h.ShortTTL, opts)
		s.h.Expire(t)
		lease := s.acquire(t, l, old.Key, s.h.TTL, opts)
		if lease.Token <= old.Token {
			t.Fatalf("Acquire(%q) by the same owner after expiry returned token %d; want more than %d", old.Key, lease.Token, old.Token)
		}
		_, err := l.Renew(t.Context(), old)
		wantErr(t, err, fence.ErrNotHeld, "Renew of the expired lease (same owner, older token)")
		wantErr(t, l.Release(t.Context(), old), fence.ErrNotHeld, "Release of the expired lease (same owner, older token)")
		s.wantHolder(t, other, lease)
		s.renew(t, l, lease)
	}},
}
