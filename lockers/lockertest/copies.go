package lockertest

import (
	"fmt"
	"testing"

	"github.com/fencekit/fence"
)

// renewals is how many times copiesCase renews its lease, each after a
// quarter of ShortTTL: the job outlives its TTL more than twice.
const renewals = 9

// copiesCase tests the sentence of fence.Lease that a lease is its key,
// owner and token: a job that outlives its TTL renews the lease many
// times, and afterwards every copy of it, the one from Acquire included
// (whose ValidUntil passed long ago), renews and releases it. Harness.Pass
// moves time by less than ShortTTL, which on a shared fake clock would
// expire no other case's leases only if no other case ran: the case runs
// alone, before the others.
func copiesCase(t *testing.T, s *suite) {
	l, other := s.locker(t), s.locker(t)
	first := s.acquire(t, l, s.key(t), s.h.ShortTTL, nil)
	copies := []fence.Lease{first}
	latest := first
	for range renewals {
		s.h.Pass(t, s.h.ShortTTL/4)
		latest = s.renew(t, l, latest)
		copies = append(copies, latest)
	}
	if now, ok := s.now(); ok && now.Before(first.ValidUntil) {
		t.Fatalf("lockertest: after %d renewals the acquisition copy is still valid (until %v, now %v): Harness.Pass let too little time pass",
			renewals, first.ValidUntil, now)
	}
	s.wantHolder(t, other, latest)

	// Renewing with the copy from Acquire, then with one from the middle,
	// keeps the lease: the copy's own ValidUntil does not decide.
	s.wantHolder(t, other, s.renew(t, l, first))
	s.wantHolder(t, other, s.renew(t, l, copies[len(copies)/2]))

	// Releasing with the copy from Acquire frees the key at once.
	release(t, l, first)
	s.wantFree(t, other, latest)
	for i, c := range copies {
		_, err := l.Renew(t.Context(), c)
		wantErr(t, err, fence.ErrNotHeld, fmt.Sprintf("Renew of a released lease with copy %d of %d", i, len(copies)))
		wantErr(t, l.Release(t.Context(), c), fence.ErrNotHeld, fmt.Sprintf("Release of a released lease with copy %d of %d", i, len(copies)))
	}
	s.wantFree(t, other, latest)
	s.acquireAfter(t, other, first.Key, first.Token, "a release with the acquisition copy")
}
