package etcd

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestRenewBatch: RenewBatch renews, in two transactions of reads and one
// keepalive stream, every lease still held, across more leases than one
// transaction reads, and answers fence.ErrNotHeld for those released,
// or broken, in order.
func TestRenewBatch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := sharedClient(t)
	l := newTestLocker(t, c, nil)
	var leases []fence.Lease
	for i := range batchReads + 20 {
		lease, err := l.Acquire(ctx, fmt.Sprint("k", i), DefaultMinTTL, nil)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, lease)
	}
	gone := map[int]string{3: "released", 50: "broken", batchReads + 5: "released"}
	for i, how := range gone {
		var err error
		if how == "released" {
			err = l.Release(ctx, leases[i])
		} else {
			err = l.Break(ctx, leases[i].Key)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(DefaultMinTTL / 2)
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
	// The renewals reached the server: past the first TTL, the keys are
	// still held.
	time.Sleep(DefaultMinTTL/2 + 500*time.Millisecond)
	for _, i := range []int{0, batchReads + 19} {
		info, err := l.Inspect(ctx, leases[i].Key)
		if err != nil || !info.Held || info.Token != leases[i].Token {
			t.Errorf("Inspect(%q) after the batch renewal and its first TTL = %+v, %v; want held with token %d", leases[i].Key, info, err, leases[i].Token)
		}
	}
}
