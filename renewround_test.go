package fence_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/lockers/memory"
)

// slowRenewer is a driver without RenewBatch whose renewals take delay
// each, on the real clock, before reaching the store: a remote store's
// round trip. It counts the renewals, their errors, and the most in
// flight at once.
type slowRenewer struct {
	driver.Locker
	delay                 time.Duration
	mu                    sync.Mutex
	inFlight, maxInFlight int
	calls, failed         atomic.Int64
}

func (d *slowRenewer) Renew(ctx context.Context, lease fence.Lease) error {
	d.mu.Lock()
	d.inFlight++
	d.maxInFlight = max(d.maxInFlight, d.inFlight)
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.inFlight--
		d.mu.Unlock()
	}()
	d.calls.Add(1)
	select {
	case <-time.After(d.delay):
	case <-ctx.Done():
		d.failed.Add(1)
		return ctx.Err()
	}
	err := d.Locker.Renew(ctx, lease)
	if err != nil {
		d.failed.Add(1)
	}
	return err
}

// A round of many leases on a driver that renews one lease per call runs
// its calls side by side, a bounded number at once, each with a timeout
// of its own: it renews them all, where one after another they would
// not fit in one CallTimeout.
func TestRoundOfManySlowRenewals(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Unix(1e9, 0))
	var slow *slowRenewer
	l, err := driver.Wrap(memory.New(&memory.Options{Clock: clock}), func(d driver.Locker) driver.Locker {
		slow = &slowRenewer{Locker: d, delay: 20 * time.Millisecond}
		return slow
	})
	if err != nil {
		t.Fatal(err)
	}
	// 1,000 renewals of 20 ms take 20 s one after another: 10 times the
	// CallTimeout.
	const n = 1000
	const ttl = 30 * time.Second
	s := newSession(t, l, &fence.SessionOptions{TTL: ttl, CallTimeout: 2 * time.Second, Clock: clock})
	hs := make([]*fence.Handle, n)
	for i := range hs {
		h, err := s.Lock(t.Context(), fmt.Sprintf("key-%d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		hs[i] = h
	}
	first := hs[0].Lease().ValidUntil
	for range 2 {
		// Both timers armed (the next renewal and the earliest
		// deadline): the keepalive is idle.
		if err := clock.WaitTimers(t.Context(), 2); err != nil {
			t.Fatal(err)
		}
		// The renewal timer fired: the round runs, then arms it again.
		clock.Advance(ttl / 3)
		if err := clock.WaitTimers(t.Context(), 2); err != nil {
			t.Fatal(err)
		}
	}
	if got := slow.calls.Load(); got != 2*n {
		t.Errorf("2 rounds made %d renewals; want %d", got, 2*n)
	}
	if got := slow.failed.Load(); got != 0 {
		t.Errorf("%d renewals of %d failed", got, slow.calls.Load())
	}
	slow.mu.Lock()
	most := slow.maxInFlight
	slow.mu.Unlock()
	if most < 2 || most > 32 {
		t.Errorf("%d renewals were in flight at once; want several, at most 32", most)
	}
	for i, h := range hs {
		if err := h.Err(); err != nil {
			t.Fatalf("handle %d: %v", i, err)
		}
		if !h.Lease().ValidUntil.After(first) {
			t.Fatalf("handle %d valid until %v after 2 rounds; first %v", i, h.Lease().ValidUntil, first)
		}
	}
}

// batchRenewer is a driver that renews in batches and, while failing is
// set, fails every batch as a whole, as a store whose connection dropped
// does. It counts the reads of Inspect.
type batchRenewer struct {
	driver.Locker
	failing  atomic.Bool
	inspects atomic.Int64
}

func (d *batchRenewer) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	errs := make([]error, len(leases))
	for i, lease := range leases {
		if d.failing.Load() {
			errs[i] = errors.New("connection reset by peer")
			continue
		}
		errs[i] = d.Locker.Renew(ctx, lease)
	}
	return errs
}

func (d *batchRenewer) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	d.inspects.Add(1)
	return d.Locker.Inspect(ctx, key)
}

// A batch that fails as a whole is retried as a batch, not followed by a
// re-read of every lease: at 10,000 leases those re-reads would outlast
// the leases' deadlines.
func TestFailedBatchIsNotReadLeaseByLease(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Unix(1e9, 0))
	var d *batchRenewer
	l, err := driver.Wrap(memory.New(&memory.Options{Clock: clock}), func(inner driver.Locker) driver.Locker {
		d = &batchRenewer{Locker: inner}
		return d
	})
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	const ttl = 30 * time.Second
	s := newSession(t, l, &fence.SessionOptions{TTL: ttl, Clock: clock})
	hs := make([]*fence.Handle, n)
	for i := range hs {
		if hs[i], err = s.Lock(t.Context(), fmt.Sprintf("key-%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	first := hs[0].Lease().ValidUntil
	d.failing.Store(true)
	if err := clock.WaitTimers(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	clock.Advance(ttl / 3) // the round runs and fails
	if err := clock.WaitTimers(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	if got := d.inspects.Load(); got != 0 {
		t.Errorf("a batch that failed as a whole was followed by %d reads; want 0", got)
	}
	d.failing.Store(false)
	clock.Advance(ttl / 3) // the retry, past any backoff, succeeds
	if err := clock.WaitTimers(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		if err := h.Err(); err != nil {
			t.Fatalf("handle %d: %v", i, err)
		}
		if !h.Lease().ValidUntil.After(first) {
			t.Fatalf("handle %d was not renewed by the retry", i)
		}
	}
}
