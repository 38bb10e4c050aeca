package fenceotel_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/fenceotel"
)

// batching is a store that renews many leases in one call, and counts
// those calls.
type batching struct {
	driver.Locker
	calls atomic.Int32
}

func (b *batching) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	b.calls.Add(1)
	errs := make([]error, len(leases))
	for i, l := range leases {
		errs[i] = b.Renew(ctx, l)
	}
	return errs
}

// A session over an observed locker whose store renews in batches renews
// its leases with one call per round, and each lease still gets its span.
func TestBatchRenewalSpans(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	var inner *batching
	locker, err := driver.Wrap(e.mem, func(d driver.Locker) driver.Locker {
		inner = &batching{Locker: d}
		return inner
	})
	if err != nil {
		t.Fatal(err)
	}
	locker.SetObserver(e.tel.Observer())
	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: ttl, Clock: e.clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close(context.Background()) })
	for _, key := range []string{"a", "b"} {
		if _, err := sess.Lock(t.Context(), key, nil); err != nil {
			t.Fatalf("Lock %s: %v", key, err)
		}
	}
	e.waitIdle(t)
	e.clk.Advance(interval)
	e.waitIdle(t) // the round came back: both timers are armed again
	if n := inner.calls.Load(); n != 1 {
		t.Fatalf("%d RenewBatch calls, want 1 for the round", n)
	}
	spans := e.spansNamed("fence.lock.renew")
	if len(spans) != 2 {
		t.Fatalf("%d renew spans, want one per lease", len(spans))
	}
	keys := map[string]bool{}
	for _, s := range spans {
		k, _ := attr(s, "fence.key")
		out, _ := attr(s, "fence.outcome")
		keys[k.AsString()] = true
		if out.AsString() != "renewed" {
			t.Errorf("renew span of %q: outcome %q, want renewed", k.AsString(), out.AsString())
		}
	}
	if !keys["a"] || !keys["b"] {
		t.Errorf("renew spans for %v, want a and b", keys)
	}
	rm := e.collect(t)
	if n, _ := histogram(t, rm, fenceotel.MetricLockOperationDuration, str("fence.operation", "renew"), str("fence.outcome", "renewed")); n != 2 {
		t.Errorf("%s{renew,renewed}: %d samples, want one per lease", fenceotel.MetricLockOperationDuration, n)
	}
}

// A Lock waiting on an observed locker wakes when the store announces the
// holder's release: here the holder is another process's client (another
// Locker over the same store), and the fake clock stands still, so
// neither a local release, nor the holder's expiry, nor a poll can wake
// it.
func TestObservedLockerWakesOnReleaseNotices(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	open := func() *fence.Session {
		l, err := driver.Wrap(e.mem, func(d driver.Locker) driver.Locker { return d })
		if err != nil {
			t.Fatal(err)
		}
		l.SetObserver(e.tel.Observer())
		s, err := fence.NewSession(l, &fence.SessionOptions{TTL: ttl, Clock: e.clk})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		return s
	}
	holder, waiter := open(), open()
	h, err := holder.Lock(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := waiter.Lock(t.Context(), "k", &fence.LockOptions{Wait: fence.WaitForever})
		got <- err
	}()
	// The holder's keepalive arms two timers, the waiter's sleep one.
	if err := e.clk.WaitTimers(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("Lock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting Lock did not wake on the release")
	}
}
