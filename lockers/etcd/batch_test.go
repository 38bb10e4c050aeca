package etcd

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestRenewBatch: RenewBatch renews every lease still held, across more
// leases than one transaction reads (so checked by the keys attached to
// the shared lease), and answers fence.ErrNotHeld for those released, or
// broken (through this Locker, or another, which this Locker learns
// from the keys no longer attached), in order.
func TestRenewBatch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := sharedClient(t)
	l := newTestLocker(t, c, nil)
	operator := newTestLocker(t, c, &Options{Prefix: l.d.prefix})
	// Taking 120 leases one by one takes seconds on a loaded machine: a
	// TTL of a few times that keeps the first ones alive until the batch.
	const ttl = 3 * DefaultMinTTL
	var leases []fence.Lease
	for i := range batchReads + 20 {
		lease, err := l.Acquire(ctx, fmt.Sprint("k", i), ttl, nil)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, lease)
	}
	gone := map[int]string{3: "released", 50: "broken", 70: "broken by another Locker", batchReads + 5: "released"}
	for i, how := range gone {
		var err error
		switch how {
		case "released":
			err = l.Release(ctx, leases[i])
		case "broken":
			err = l.Break(ctx, leases[i].Key)
		default:
			err = operator.Break(ctx, leases[i].Key)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second) // so that the renewal moves every lease's end
	errs := l.d.RenewBatch(ctx, leases)
	if len(errs) != len(leases) {
		t.Fatalf("RenewBatch answered %d leases of %d", len(errs), len(leases))
	}
	for i, err := range errs {
		if how, ok := gone[i]; ok {
			if !errors.Is(err, fence.ErrNotHeld) {
				t.Errorf("lease %d, %s: %v; want fence.ErrNotHeld", i, how, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("lease %d: %v", i, err)
		}
	}
	// The renewals reached the server: past the end of the first lease's
	// first TTL, the keys are still held.
	time.Sleep(time.Until(leases[0].ValidUntil) + 500*time.Millisecond)
	for _, i := range []int{0, batchReads + 19} {
		info, err := l.Inspect(ctx, leases[i].Key)
		if err != nil || !info.Held || info.Token != leases[i].Token {
			t.Errorf("Inspect(%q) after the batch renewal and its first TTL = %+v, %v; want held with token %d", leases[i].Key, info, err, leases[i].Token)
		}
	}
}
