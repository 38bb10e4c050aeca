package lockertest

import (
	"testing"

	"github.com/fencekit/fence"
)

// renewCases test Locker.Renew: it extends only one's own unexpired lease,
// keeps its token, and is harmless when repeated.
var renewCases = []testCase{
	{"KeepsTokenAndTheKeyHeld", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		renewed := s.renew(t, l, lease)
		s.wantHolder(t, other, renewed)
		s.wantHolder(t, other, s.renew(t, l, renewed))
	}},
	{"ExtendsFromTheRenewal", func(t *testing.T, s *suite) {
		// Time passes (Expire moves it by at least ShortTTL); the
		// renewed lease runs TTL from the renewal, so it ends later
		// than the lease it renewed.
		l, other := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		s.h.Expire(t)
		s.wantHolder(t, other, lease) // a lease of TTL outlives Expire
		renewed := s.renew(t, l, lease)
		if !renewed.ValidUntil.After(lease.ValidUntil) {
			t.Fatalf("Renew(%q) after time passed returned ValidUntil %v; want later than the renewed lease's %v",
				lease.Key, renewed.ValidUntil, lease.ValidUntil)
		}
		s.wantHolder(t, other, renewed)
	}},
	{"TwiceIsHarmless", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		s.renew(t, l, lease)
		s.renew(t, l, lease) // the same, original lease again
		s.wantHolder(t, other, lease)
	}},
	{"AfterExpiryFails", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.ShortTTL, nil)
		s.h.Expire(t)
		_, err := l.Renew(t.Context(), lease)
		wantErr(t, err, fence.ErrNotHeld, "Renew of an expired lease")
		s.wantFree(t, other, lease) // the failed Renew did not revive it
		s.acquireAfter(t, other, lease.Key, lease.Token, "an expiry")
	}},
	{"AfterTakeoverFails", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		stale := s.acquire(t, l, s.key(t), s.h.ShortTTL, nil)
		s.h.Expire(t)
		lease := s.acquireAfter(t, other, stale.Key, stale.Token, "an expiry")
		_, err := l.Renew(t.Context(), stale)
		wantErr(t, err, fence.ErrNotHeld, "Renew of a lease taken over")
		s.wantHolder(t, l, lease)
		s.renew(t, other, lease)
	}},
	{"AfterReleaseFails", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		release(t, l, lease)
		_, err := l.Renew(t.Context(), lease)
		wantErr(t, err, fence.ErrNotHeld, "Renew of a released lease")
		s.wantFree(t, other, lease)
	}},
	{"AfterBreakFails", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		breakKey(t, other, lease.Key)
		_, err := l.Renew(t.Context(), lease)
		wantErr(t, err, fence.ErrNotHeld, "Renew of a broken lease")
		s.wantFree(t, other, lease)
		next := s.acquireAfter(t, other, lease.Key, lease.Token, "a Break")
		_, err = l.Renew(t.Context(), lease)
		wantErr(t, err, fence.ErrNotHeld, "Renew of a broken lease after another owner took the key")
		s.wantHolder(t, l, next)
	}},
	{"ComparesOwnerAndToken", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		lease := s.heldTwice(t, l)
		for _, f := range forgeries(lease) {
			_, err := other.Renew(t.Context(), f.lease)
			wantErr(t, err, fence.ErrNotHeld, "Renew of the holder's lease with "+f.name)
		}
		s.wantHolder(t, other, lease)
		s.renew(t, l, lease)
	}},
	{"UnknownKeyFails", func(t *testing.T, s *suite) {
		l := s.locker(t)
		key := s.key(t)
		_, err := l.Renew(t.Context(), fence.Lease{Key: key, Owner: fence.NewOwnerID(), Token: 1, TTL: s.h.TTL})
		wantErr(t, err, fence.ErrNotHeld, "Renew of a lease on a key never acquired")
		s.wantNeverAcquired(t, l, key)
	}},
}

// forgery is a lease that differs from a held one in owner or token only.
type forgery struct {
	name  string
	lease fence.Lease
}

// forgeries returns leases that differ from lease in owner or token only:
// none of them is held, whatever the holder of lease does.
func forgeries(lease fence.Lease) []forgery {
	otherOwner, nextToken, prevToken := lease, lease, lease
	otherOwner.Owner = fence.NewOwnerID()
	nextToken.Token++
	out := []forgery{{"another owner", otherOwner}, {"the next token", nextToken}}
	if lease.Token > 1 {
		prevToken.Token--
		out = append(out, forgery{"the previous token", prevToken})
	}
	return out
}

// heldTwice returns a lease on a fresh key that is its second: its token
// has a predecessor, so forgeries include the previous token.
func (s *suite) heldTwice(t *testing.T, l *fence.Locker) fence.Lease {
	t.Helper()
	first := s.acquire(t, l, s.key(t), s.h.TTL, nil)
	release(t, l, first)
	return s.acquireAfter(t, l, first.Key, first.Token, "a release")
}
