package lockertest

import (
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// batchCases test driver.BatchRenewer, for a driver that has it (a
// Session renews its leases with one RenewBatch call per round): it
// answers one result per lease, in order, each as Renew would.
var batchCases = []testCase{
	{"EachLeaseAsRenewWould", func(t *testing.T, s *suite) {
		l, other := s.locker(t), s.locker(t)
		batch := batchRenewer(t, l)
		held := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		released := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		release(t, l, released)
		broken := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		breakKey(t, other, broken.Key)
		takenOver := s.acquire(t, l, s.key(t), s.h.ShortTTL, nil)
		s.h.Expire(t)
		successor := s.acquireAfter(t, other, takenOver.Key, takenOver.Token, "an expiry")
		never := held
		never.Token = held.Token + 1_000_000 // a token the key never had
		cases := []struct {
			name  string
			lease fence.Lease
			held  bool
		}{
			{"held", held, true},
			{"released", released, false},
			{"broken", broken, false},
			{"taken over", takenOver, false},
			{"token never issued", never, false},
			{"held, given twice", held, true},
		}
		leases := make([]fence.Lease, len(cases))
		for i, c := range cases {
			leases[i] = c.lease
		}
		errs := batch.RenewBatch(t.Context(), leases)
		if len(errs) != len(cases) {
			t.Fatalf("RenewBatch answered %d results for %d leases", len(errs), len(cases))
		}
		for i, c := range cases {
			if c.held {
				if errs[i] != nil {
					t.Errorf("RenewBatch, %s: %v; want it renewed", c.name, errs[i])
				}
				continue
			}
			wantErr(t, errs[i], fence.ErrNotHeld, "RenewBatch, "+c.name)
		}
		s.wantHolder(t, other, held)
		s.wantHolder(t, l, successor) // the stale lease did not take it back
		s.renew(t, l, held)           // a lease the batch renewed renews alone too
	}},
	{"EmptyBatch", func(t *testing.T, s *suite) {
		batch := batchRenewer(t, s.locker(t))
		if errs := batch.RenewBatch(t.Context(), nil); len(errs) != 0 {
			t.Fatalf("RenewBatch of no lease answered %d results", len(errs))
		}
	}},
}

// batchRenewer returns the driver under l as a driver.BatchRenewer, and
// skips the test when it renews one lease per call.
func batchRenewer(t *testing.T, l *fence.Locker) driver.BatchRenewer {
	t.Helper()
	var b driver.BatchRenewer
	if _, err := driver.Wrap(l, func(d driver.Locker) driver.Locker {
		b, _ = d.(driver.BatchRenewer)
		return d
	}); err != nil {
		t.Fatalf("driver.Wrap: %v", err)
	}
	if b == nil {
		t.Skip("the driver renews one lease per call (no driver.BatchRenewer)")
	}
	return b
}
