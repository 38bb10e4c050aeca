package objlocktest

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// RunFaults checks the retries of throttled and failed requests, and the
// reconciliation of writes whose answer was lost, through Faults.
func RunFaults(t *testing.T, h Harness) {
	runAll(t, h, []test{
		{"ThrottledWritesBackOffAndLand", faultsThrottledWritesBackOffAndLand},
		{"ThrottlingGivesUpAfterMaxAttempts", faultsThrottlingGivesUpAfterMaxAttempts},
		{"ThrottlingStopsAtTheCallersDeadline", faultsThrottlingStopsAtTheCallersDeadline},
		{"LostResponsesAreReconciled", faultsLostResponsesAreReconciled},
		{"LostRequestIsRetried", faultsLostRequestIsRetried},
		{"LostResponseOfARefusedWriteIsNotASuccess", faultsLostResponseOfARefusedWriteIsNotASuccess},
		{"ThrottledReadsBackOffToo", faultsThrottledReadsBackOffToo},
		{"HangingStoreReturnsWithTheContext", faultsHangingStoreReturnsWithTheContext},
	})
}

func faultsThrottledWritesBackOffAndLand(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	l, f, c := FaultyLocker(t, h, bucket, First(3, Throttle), nil)
	lease := Acquire(t, l, "k", h.MinTTL)
	if f.N() != 4 || c.Writes.Load() != 1 || c.Other.Load() != h.FirstReads {
		t.Fatalf("Acquire made %d writes of which %d reached the store, and %d other requests; want 4 (3 throttled), 1 and %d (the first look)", f.N(), c.Writes.Load(), c.Other.Load(), h.FirstReads)
	}
	if info := Inspect(t, h.NewLocker(t, bucket, nil, Options{}), "k"); !info.Held || info.Owner != lease.Owner || info.Token != 1 {
		t.Fatalf("after a throttled Acquire, Inspect = %+v; want held by %q with token 1", info, lease.Owner)
	}
}

func faultsThrottlingGivesUpAfterMaxAttempts(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	l, f, c := FaultyLocker(t, h, bucket, First(1<<30, Throttle), &Options{MaxAttempts: 3, Backoff: time.Millisecond})
	_, err := l.Acquire(t.Context(), "k", h.MinTTL, nil)
	if h.StatusOf(err) != http.StatusTooManyRequests {
		t.Fatalf("Acquire, always throttled, returned %v; want an error wrapping the 429", err)
	}
	if f.N() != 3 || c.Writes.Load() != 0 {
		t.Fatalf("Acquire made %d writes, %d reaching the store; want 3 and 0", f.N(), c.Writes.Load())
	}
	if info := Inspect(t, l, "k"); info.Token != 0 {
		t.Fatalf("after refused Acquires, Inspect = %+v; want the key never acquired", info)
	}
}

func faultsThrottlingStopsAtTheCallersDeadline(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	l, _, c := FaultyLocker(t, h, bucket, First(1<<30, Throttle), &Options{MaxAttempts: 1 << 20, Backoff: 5 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := l.Acquire(ctx, "k", h.MinTTL, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire, always throttled, returned %v; want an error wrapping context.DeadlineExceeded", err)
	}
	if c.Writes.Load() != 0 {
		t.Fatalf("%d throttled writes reached the store", c.Writes.Load())
	}
}

// A write whose response is lost (or answered 500 or 503 after it was
// applied) is reconciled by reading the object back: the write id shows
// it landed.
func faultsLostResponsesAreReconciled(t *testing.T, h Harness) {
	for _, v := range []struct {
		name string
		f    Fault
	}{
		{"Dropped", Drop},
		{"InternalError", AnswerAfter(http.StatusInternalServerError, "InternalError", "injected by the test after forwarding")},
		{"Unavailable", AnswerAfter(http.StatusServiceUnavailable, "ServiceUnavailable", "injected by the test after forwarding")},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			bucket := h.NewBucket(t)
			l, f, c := FaultyLocker(t, h, bucket, func(int) Fault { return v.f }, nil)
			observer := h.NewLocker(t, bucket, nil, Options{})
			lease := Acquire(t, l, "k", h.MinTTL)
			if info := Inspect(t, observer, "k"); !info.Held || info.Owner != lease.Owner || info.Token != lease.Token || lease.Token != 1 {
				t.Fatalf("after an Acquire whose answer was lost, Inspect = %+v; want held by the lease %+v with token 1", info, lease)
			}
			version := h.VersionOf(t, bucket, "k")
			renewed, err := l.Renew(t.Context(), lease)
			if err != nil {
				t.Fatalf("Renew whose answer was lost: %v", err)
			}
			if v := h.VersionOf(t, bucket, "k"); v == version || renewed.Token != lease.Token {
				t.Fatalf("Renew left %s %s (was %s) and token %d (was %d); want a new one and the same token", h.Version, v, version, renewed.Token, lease.Token)
			}
			if err := l.Release(t.Context(), renewed); err != nil {
				t.Fatalf("Release whose answer was lost: %v", err)
			}
			if info := Inspect(t, observer, "k"); info.Held || info.Owner != lease.Owner || info.Token != lease.Token {
				t.Fatalf("after a Release whose answer was lost, Inspect = %+v; want free with owner and token kept", info)
			}
			if f.N() != 3 || c.Writes.Load() != 3 {
				t.Fatalf("%d writes, %d reaching the store; want one of each per call (3): none repeated", f.N(), c.Writes.Load())
			}
		})
	}
}

// A request lost before it reached the store is found not applied (the
// version did not move) and tried again.
func faultsLostRequestIsRetried(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	l, f, c := FaultyLocker(t, h, bucket, First(2, Lose), nil)
	lease := Acquire(t, l, "k", h.MinTTL)
	if f.N() != 3 || c.Writes.Load() != 1 || lease.Token != 1 {
		t.Fatalf("Acquire made %d writes, %d reaching the store, token %d; want 3, 1 and token 1", f.N(), c.Writes.Load(), lease.Token)
	}
}

// When the response of a write that lost to another writer is dropped,
// reading back shows someone else's record: the Acquire reports the key
// held by that writer, never a success.
func faultsLostResponseOfARefusedWriteIsNotASuccess(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	l, f, _ := FaultyLocker(t, h, bucket, func(int) Fault { return Drop }, nil)
	rival := h.NewLocker(t, bucket, nil, Options{})
	first := Acquire(t, l, "k", h.MinTTL) // l now remembers its record
	if err := l.Release(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	// l remembers the key free; just before its next write reaches the
	// store, the rival takes the key.
	type result struct {
		lease fence.Lease
		err   error
	}
	rivals := make(chan result, 1)
	f.Before = func(n int) {
		if n == 3 {
			lease, err := rival.Acquire(context.Background(), "k", h.MinTTL, nil)
			rivals <- result{lease, err}
		}
	}
	_, err := l.Acquire(t.Context(), "k", h.MinTTL, nil)
	r := <-rivals
	if r.err != nil {
		t.Fatalf("the rival's Acquire: %v", r.err)
	}
	won := r.lease
	he, ok := errors.AsType[*fence.HeldError](err)
	if !ok || he.Owner != won.Owner || he.Token != won.Token {
		t.Fatalf("Acquire that lost (answer dropped) returned %v; want a HeldError naming the rival %q with token %d", err, won.Owner, won.Token)
	}
}

// throttledReads answers the first n reads with 429, then forwards.
type throttledReads struct {
	h    Harness
	next http.RoundTripper
	left atomic.Int64
}

func (f *throttledReads) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && !f.h.IsWrite(req) && f.left.Add(-1) >= 0 {
		return f.h.ErrorResponse(req, http.StatusTooManyRequests, "TooManyRequests", "throttled read (injected by the test)"), nil
	}
	return f.next.RoundTrip(req)
}

func faultsThrottledReadsBackOffToo(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	lease := Acquire(t, h.NewLocker(t, bucket, nil, Options{}), "k", h.MinTTL)
	f := &throttledReads{h: h, next: http.DefaultTransport}
	f.left.Store(3)
	l := h.NewLocker(t, bucket, f, Options{Backoff: time.Millisecond})
	if info := Inspect(t, l, "k"); !info.Held || info.Token != lease.Token {
		t.Fatalf("Inspect through 3 throttled reads = %+v; want held with token %d", info, lease.Token)
	}
	if n := f.left.Load(); n != -1 {
		t.Fatalf("%d reads were made; want 4 (3 throttled)", 3-n)
	}
}

// hang accepts every request and never answers it, until its context
// ends: a store that stopped answering.
type hang struct{}

func (hang) RoundTrip(req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, req.Context().Err()
}

// Every call returns once its ctx is done, also when the store never
// answers.
func faultsHangingStoreReturnsWithTheContext(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	l := h.NewLocker(t, bucket, hang{}, Options{Backoff: time.Millisecond})
	lease := fence.Lease{Key: "k", Owner: fence.NewOwnerID(), Token: 1, TTL: h.MinTTL, ValidUntil: time.Now().Add(time.Hour)}
	calls := map[string]func(ctx context.Context) error{
		"Acquire": func(ctx context.Context) error { _, err := l.Acquire(ctx, "k", h.MinTTL, nil); return err },
		"Inspect": func(ctx context.Context) error { _, err := l.Inspect(ctx, "k"); return err },
		"Break":   func(ctx context.Context) error { return l.Break(ctx, "k") },
		"Renew":   func(ctx context.Context) error { _, err := l.Renew(ctx, lease); return err },
		"Release": func(ctx context.Context) error { return l.Release(ctx, lease) },
		"Publish": func(ctx context.Context) error { return l.Publish(ctx, lease, "v") },
	}
	if h.Creates {
		calls["Create"] = func(ctx context.Context) error { return l.Create(ctx) }
	}
	for name, call := range calls {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		err := call(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s on a store that never answers returned %v; want an error wrapping context.DeadlineExceeded", name, err)
		}
	}
}
