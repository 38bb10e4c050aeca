package gcs

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/fencekit/fence"
)

// faultyLocker returns a Locker whose uploads go through a faults in front
// of a counter in front of the emulator, with fast retries.
func faultyLocker(t *testing.T, bucket string, plan func(n int) fault, opts *Options) (*testLocker, *faults, *counter) {
	t.Helper()
	c := &counter{next: http.DefaultTransport}
	f := &faults{next: c, plan: plan}
	if opts == nil {
		opts = &Options{Backoff: time.Millisecond}
	}
	return newLocker(t, bucket, f, opts), f, c
}

// first returns a plan that gives the first n uploads verdict v.
func first(n int, v fault) func(int) fault {
	return func(i int) fault {
		if i <= n {
			return v
		}
		return pass
	}
}

func TestThrottledWritesBackOffAndLand(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l, f, c := faultyLocker(t, bucket, first(3, throttle), nil)
	lease := acquire(t, l, "k", MinTTL)
	if f.n != 4 || c.writes.Load() != 1 {
		t.Fatalf("Acquire made %d uploads of which %d reached the store; want 4 (3 throttled) and 1", f.n, c.writes.Load())
	}
	if info := inspect(t, newLocker(t, bucket, nil, nil), "k"); !info.Held || info.Owner != lease.Owner || info.Token != 1 {
		t.Fatalf("after a throttled Acquire, Inspect = %+v; want held by %q with token 1", info, lease.Owner)
	}
}

func TestThrottlingGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l, f, c := faultyLocker(t, bucket, first(1<<30, throttle), &Options{MaxAttempts: 3, Backoff: time.Millisecond})
	_, err := l.Acquire(t.Context(), "k", MinTTL, nil)
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != http.StatusTooManyRequests {
		t.Fatalf("Acquire, always throttled, returned %v; want an error wrapping the 429", err)
	}
	if f.n != 3 || c.writes.Load() != 0 {
		t.Fatalf("Acquire made %d uploads, %d reaching the store; want 3 and 0", f.n, c.writes.Load())
	}
	if info := inspect(t, l, "k"); info.Token != 0 {
		t.Fatalf("after refused Acquires, Inspect = %+v; want the key never acquired", info)
	}
}

func TestThrottlingStopsAtTheCallersDeadline(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l, _, c := faultyLocker(t, bucket, first(1<<30, throttle), &Options{MaxAttempts: 1 << 20, Backoff: 5 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := l.Acquire(ctx, "k", MinTTL, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire, always throttled, returned %v; want an error wrapping context.DeadlineExceeded", err)
	}
	if c.writes.Load() != 0 {
		t.Fatalf("%d throttled uploads reached the store", c.writes.Load())
	}
}

// A write whose response is lost (or answered 503 after it was applied)
// is reconciled by reading the object back: the write id shows it landed.
func TestLostResponsesAreReconciled(t *testing.T) {
	t.Parallel()
	for _, v := range []struct {
		name string
		f    fault
	}{{"Dropped", drop}, {"Unavailable", unavailable}} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			bucket := newBucket(t)
			l, f, c := faultyLocker(t, bucket, func(int) fault { return v.f }, nil)
			observer := newLocker(t, bucket, nil, nil)
			lease := acquire(t, l, "k", MinTTL)
			if info := inspect(t, observer, "k"); !info.Held || info.Owner != lease.Owner || info.Token != lease.Token || lease.Token != 1 {
				t.Fatalf("after an Acquire whose answer was lost, Inspect = %+v; want held by the lease %+v with token 1", info, lease)
			}
			gen := generation(t, bucket, "k")
			renewed, err := l.Renew(t.Context(), lease)
			if err != nil {
				t.Fatalf("Renew whose answer was lost: %v", err)
			}
			if g := generation(t, bucket, "k"); g == gen || renewed.Token != lease.Token {
				t.Fatalf("Renew left generation %d (was %d) and token %d (was %d); want a new generation and the same token", g, gen, renewed.Token, lease.Token)
			}
			if err := l.Release(t.Context(), renewed); err != nil {
				t.Fatalf("Release whose answer was lost: %v", err)
			}
			if info := inspect(t, observer, "k"); info.Held || info.Owner != lease.Owner || info.Token != lease.Token {
				t.Fatalf("after a Release whose answer was lost, Inspect = %+v; want free with owner and token kept", info)
			}
			if f.n != 3 || c.writes.Load() != 3 {
				t.Fatalf("%d uploads, %d reaching the store; want one of each per call (3): none repeated", f.n, c.writes.Load())
			}
		})
	}
}

// A request lost before it reached the store is found not applied (the
// generation did not move) and tried again.
func TestLostRequestIsRetried(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l, f, c := faultyLocker(t, bucket, first(2, lose), nil)
	lease := acquire(t, l, "k", MinTTL)
	if f.n != 3 || c.writes.Load() != 1 || lease.Token != 1 {
		t.Fatalf("Acquire made %d uploads, %d reaching the store, token %d; want 3, 1 and token 1", f.n, c.writes.Load(), lease.Token)
	}
}

// When the response of a write that lost to another writer is dropped,
// reading back shows someone else's record: the Acquire reports the key
// held by that writer, never a success.
func TestLostResponseOfARefusedWriteIsNotASuccess(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l, f, _ := faultyLocker(t, bucket, func(int) fault { return drop }, nil)
	rival := newLocker(t, bucket, nil, nil)
	first := acquire(t, l, "k", MinTTL) // l now remembers its record
	if err := l.Release(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	// l remembers the key free; just before its next upload reaches the
	// store, the rival takes the key.
	type result struct {
		lease fence.Lease
		err   error
	}
	rivals := make(chan result, 1)
	f.before = func(n int) {
		if n == 3 {
			lease, err := rival.Acquire(context.Background(), "k", MinTTL, nil)
			rivals <- result{lease, err}
		}
	}
	_, err := l.Acquire(t.Context(), "k", MinTTL, nil)
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
	next http.RoundTripper
	left atomic.Int64
}

func (f *throttledReads) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && f.left.Add(-1) >= 0 {
		return errorResponse(req, http.StatusTooManyRequests, "throttled read (injected by the test)"), nil
	}
	return f.next.RoundTrip(req)
}

func TestThrottledReadsBackOffToo(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	lease := acquire(t, newLocker(t, bucket, nil, nil), "k", MinTTL)
	f := &throttledReads{next: http.DefaultTransport}
	f.left.Store(3)
	l := newLocker(t, bucket, f, &Options{Backoff: time.Millisecond})
	if info := inspect(t, l, "k"); !info.Held || info.Token != lease.Token {
		t.Fatalf("Inspect through 3 throttled reads = %+v; want held with token %d", info, lease.Token)
	}
	if n := f.left.Load(); n != -1 {
		t.Fatalf("%d reads were made; want 4 (3 throttled)", 3-n)
	}
}
