package fenceotel_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
	"github.com/fencekit/fence/lockers/memory"
)

// batching is a memory locker that counts the RenewMany calls a session
// makes through the wrapper.
type batching struct {
	*memory.Locker
	calls atomic.Int32
}

func (b *batching) RenewMany(ctx context.Context, leases []fence.Lease) ([]fence.Lease, []error) {
	b.calls.Add(1)
	return b.Locker.RenewMany(ctx, leases)
}

// A session over a wrapped locker renews its leases with one RenewMany
// call of the wrapped locker per round, and each lease still gets its
// span.
func TestWrappedLockerRenewsInBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	inner := &batching{Locker: e.mem}
	locker, err := e.tel.WrapLocker(inner)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: ttl, Clock: e.clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close(context.Background()) })
	for _, key := range []string{"a", "b"} {
		if _, err := sess.Lock(t.Context(), key, nil); err != nil {
			t.Fatalf("TryLock %s: %v", key, err)
		}
	}
	e.waitIdle(t)
	e.clk.Advance(interval)
	e.waitIdle(t) // the round came back: both timers are armed again
	if n := inner.calls.Load(); n != 1 {
		t.Fatalf("%d RenewMany calls of the wrapped locker, want 1 for the round", n)
	}
	spans := e.spansNamed(fenceotel.SpanRenew)
	if len(spans) != 2 {
		t.Fatalf("%d renew spans, want one per lease", len(spans))
	}
	keys := map[string]bool{}
	for _, s := range spans {
		k, _ := attr(s, fenceotel.AttrKey)
		out, _ := attr(s, fenceotel.AttrOutcome)
		keys[k.AsString()] = true
		if out.AsString() != fenceotel.OutcomeRenewed {
			t.Errorf("renew span of %q: outcome %q, want %q", k.AsString(), out.AsString(), fenceotel.OutcomeRenewed)
		}
	}
	if !keys["a"] || !keys["b"] {
		t.Errorf("renew spans for %v, want a and b", keys)
	}
}

// A Lock waiting on a wrapped locker wakes when the store announces the
// holder's release: here the holder is another process's client (another
// wrapper over the same store), and the fake clock stands still, so
// neither a local release, nor the holder's expiry, nor a poll can wake
// it.
func TestWrappedLockerPassesReleaseNotices(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	open := func() *fence.Session {
		l, err := e.tel.WrapLocker(e.mem)
		if err != nil {
			t.Fatal(err)
		}
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
