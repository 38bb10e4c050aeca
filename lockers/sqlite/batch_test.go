package sqlite_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
)

// TestRenewBatch renews, in one call, leases in every state a keepalive
// meets: held (with different TTLs, one given twice, keys that need
// escaping), expired, released, broken, taken over after expiry, and
// never issued. Only the held ones are extended, each by its own TTL from
// the Clock's time of the call.
func TestRenewBatch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := open(t, fileURL(t), clock)
	acquire := func(key string, ttl time.Duration) fence.Lease {
		t.Helper()
		lease, err := l.Acquire(ctx, key, ttl, nil)
		if err != nil {
			t.Fatalf("Acquire %q: %v", key, err)
		}
		return lease
	}
	const short = time.Second
	minute := acquire("minute", time.Minute)
	hours := acquire("hours", 2*time.Hour)
	odd := acquire("quote\" back\\slash\nnewline <a&b> ünï/κλειδί 🔒", time.Minute)
	expired := acquire("expired", short)
	takenOver := acquire("taken-over", short)
	released := acquire("released", time.Minute)
	broken := acquire("broken", time.Minute)
	if err := l.Release(ctx, released); err != nil {
		t.Fatal(err)
	}
	if err := l.Break(ctx, "broken"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(short)
	successor := acquire("taken-over", time.Minute)
	clock.Advance(time.Second)
	never := fence.Lease{Key: "minute", Owner: minute.Owner, Token: minute.Token + 7, TTL: time.Minute}
	otherOwner := fence.Lease{Key: "minute", Owner: "someone else", Token: minute.Token, TTL: time.Minute}
	beyond := fence.Lease{Key: "minute", Owner: minute.Owner, Token: 1 << 63, TTL: time.Minute}

	cases := []struct {
		name  string
		lease fence.Lease
		held  bool
	}{
		{"held, TTL 1 min", minute, true},
		{"expired", expired, false},
		{"held, TTL 2 h", hours, true},
		{"taken over", takenOver, false},
		{"released", released, false},
		{"broken", broken, false},
		{"held, given twice", minute, true},
		{"held, key to escape", odd, true},
		{"successor", successor, true},
		{"token never issued", never, false},
		{"another owner", otherOwner, false},
		{"token beyond INTEGER", beyond, false},
	}
	leases := make([]fence.Lease, len(cases))
	for i, c := range cases {
		leases[i] = c.lease
	}
	errs := driver.LockerOf(l).(driver.BatchRenewer).RenewBatch(ctx, leases)
	if len(errs) != len(cases) {
		t.Fatalf("RenewBatch answered %d leases of %d", len(errs), len(cases))
	}
	for i, c := range cases {
		switch err := errs[i]; {
		case c.held && err != nil:
			t.Errorf("%s: %v, want renewed", c.name, err)
		case !c.held && !errors.Is(err, fence.ErrNotHeld):
			t.Errorf("%s: %v, want ErrNotHeld", c.name, err)
		}
	}

	// Each held lease now ends its own TTL after the call; the others
	// were not touched.
	now := clock.Now()
	for _, c := range cases {
		info, err := l.Inspect(ctx, c.lease.Key)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.held && (!info.Held || !info.ValidUntil.Equal(now.Add(c.lease.TTL))):
			t.Errorf("%s: %+v after the batch, want held until %v", c.name, info, now.Add(c.lease.TTL))
		case c.lease == expired || c.lease == released || c.lease == broken:
			if info.Held {
				t.Errorf("%s: %+v after the batch, want free", c.name, info)
			}
		}
	}

	if errs := driver.LockerOf(l).(driver.BatchRenewer).RenewBatch(ctx, nil); len(errs) != 0 {
		t.Errorf("RenewBatch(nil) = %v, want no answers", errs)
	}
}

// TestRenewBatchMany renews thousands of leases in one call, every one
// extended.
func TestRenewBatchMany(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := open(t, fileURL(t), clock)
	leases := make([]fence.Lease, 5000)
	for i := range leases {
		lease, err := l.Acquire(ctx, fmt.Sprintf("key-%d", i), time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		leases[i] = lease
	}
	clock.Advance(30 * time.Second)
	for i, err := range driver.LockerOf(l).(driver.BatchRenewer).RenewBatch(ctx, leases) {
		if err != nil {
			t.Fatalf("lease %d: %v", i, err)
		}
	}
	clock.Advance(45 * time.Second) // past the first expiry, before the renewed one
	for _, i := range []int{0, len(leases) / 2, len(leases) - 1} {
		if info, err := l.Inspect(ctx, leases[i].Key); err != nil || !info.Held {
			t.Errorf("lease %d after the batch: %+v, %v; want held", i, info, err)
		}
	}
}
