package s3

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// faultyLocker returns a Locker whose PUTs go through a faults in front
// of a counter in front of MinIO, with fast retries.
func faultyLocker(t *testing.T, bucket string, plan func(n int) fault, opts *Options) (*testLocker, *faults, *counter) {
	t.Helper()
	c := &counter{next: http.DefaultTransport}
	f := &faults{next: c, plan: plan}
	if opts == nil {
		opts = &Options{Backoff: time.Millisecond}
	}
	return newLocker(t, bucket, f, opts), f, c
}

// first returns a plan that gives the first n PUTs verdict v.
func first(n int, v fault) func(int) fault {
	return func(i int) fault {
		if i <= n {
			return v
		}
		return pass
	}
}

// Refusals that say the write was not applied (429) are retried after a
// backoff, without a read.
func TestThrottledWritesBackOffAndLand(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l, f, c := faultyLocker(t, bucket, first(3, throttle), nil)
	lease := acquire(t, l, "k", MinTTL)
	if f.n != 4 || c.puts.Load() != 1 || c.gets.Load() != 1 {
		t.Fatalf("Acquire made %d PUTs of which %d reached the store, and %d GETs; want 4 (3 throttled), 1 and 1 (the first look)", f.n, c.puts.Load(), c.gets.Load())
	}
	if info := inspect(t, newLocker(t, bucket, nil, nil), "k"); !info.Held || info.Owner != lease.Owner || info.Token != 1 {
		t.Fatalf("after a throttled Acquire, Inspect = %+v; want held by %q with token 1", info, lease.Owner)
	}
}

// S3's 503 SlowDown is taken as an unknown outcome: the object is read
// back, found unchanged, and the write tried again.
func TestSlowDownIsReadBackAndRetried(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l, f, c := faultyLocker(t, bucket, first(2, slowDown), nil)
	lease := acquire(t, l, "k", MinTTL)
	if f.n != 3 || c.puts.Load() != 1 || c.gets.Load() != 3 || lease.Token != 1 {
		t.Fatalf("Acquire made %d PUTs, %d reaching the store, and %d GETs, token %d; want 3, 1, 3 (a look and two read-backs) and token 1", f.n, c.puts.Load(), c.gets.Load(), lease.Token)
	}
}

func TestThrottlingGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l, f, c := faultyLocker(t, bucket, first(1<<30, throttle), &Options{MaxAttempts: 3, Backoff: time.Millisecond})
	_, err := l.Acquire(t.Context(), "k", MinTTL, nil)
	if statusOf(err) != http.StatusTooManyRequests {
		t.Fatalf("Acquire, always throttled, returned %v; want an error wrapping the 429", err)
	}
	if f.n != 3 || c.puts.Load() != 0 {
		t.Fatalf("Acquire made %d PUTs, %d reaching the store; want 3 and 0", f.n, c.puts.Load())
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
	if c.puts.Load() != 0 {
		t.Fatalf("%d throttled PUTs reached the store", c.puts.Load())
	}
}

// A write whose response is lost (or answered 500 after it was applied)
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
			etag := etagOf(t, bucket, "k")
			renewed, err := l.Renew(t.Context(), lease)
			if err != nil {
				t.Fatalf("Renew whose answer was lost: %v", err)
			}
			if e := etagOf(t, bucket, "k"); e == etag || renewed.Token != lease.Token {
				t.Fatalf("Renew left ETag %s (was %s) and token %d (was %d); want a new ETag and the same token", e, etag, renewed.Token, lease.Token)
			}
			if err := l.Release(t.Context(), renewed); err != nil {
				t.Fatalf("Release whose answer was lost: %v", err)
			}
			if info := inspect(t, observer, "k"); info.Held || info.Owner != lease.Owner || info.Token != lease.Token {
				t.Fatalf("after a Release whose answer was lost, Inspect = %+v; want free with owner and token kept", info)
			}
			if f.n != 3 || c.puts.Load() != 3 {
				t.Fatalf("%d PUTs, %d reaching the store; want one of each per call (3): none repeated", f.n, c.puts.Load())
			}
		})
	}
}

// A request lost before it reached the store is found not applied (the
// ETag did not move) and tried again.
func TestLostRequestIsRetried(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l, f, c := faultyLocker(t, bucket, first(2, lose), nil)
	lease := acquire(t, l, "k", MinTTL)
	if f.n != 3 || c.puts.Load() != 1 || lease.Token != 1 {
		t.Fatalf("Acquire made %d PUTs, %d reaching the store, token %d; want 3, 1 and token 1", f.n, c.puts.Load(), lease.Token)
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
	// l remembers the key free; just before its next PUT reaches the
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

// S3 answers 409 ConditionalRequestConflict to a conditional write that
// raced another on the same key (MinIO answers 412 instead: the
// answer is injected). When the other write took the key, the Acquire
// reports it held; when the key is still free, it tries again.
func TestConditionalRequestConflict(t *testing.T) {
	t.Parallel()
	t.Run("RivalWon", func(t *testing.T) {
		t.Parallel()
		bucket := newBucket(t)
		l, f, _ := faultyLocker(t, bucket, func(n int) fault {
			if n == 1 {
				return conflict
			}
			return pass
		}, nil)
		rival := newLocker(t, bucket, nil, nil)
		inspect(t, l, "k") // l remembers nothing held: it will write at once
		var won fence.Lease
		f.before = func(n int) {
			if n == 1 {
				won = acquire(t, rival, "k", MinTTL)
			}
		}
		_, err := l.Acquire(t.Context(), "k", MinTTL, nil)
		he, ok := errors.AsType[*fence.HeldError](err)
		if !ok || he.Owner != won.Owner || he.Token != won.Token {
			t.Fatalf("Acquire answered 409 after a rival won: %v; want a HeldError naming the rival %q with token %d", err, won.Owner, won.Token)
		}
	})
	t.Run("NoneWon", func(t *testing.T) {
		t.Parallel()
		bucket := newBucket(t)
		l, f, c := faultyLocker(t, bucket, first(1, conflict), nil)
		lease := acquire(t, l, "k", MinTTL)
		if lease.Token != 1 || f.n != 2 || c.puts.Load() != 1 {
			t.Fatalf("Acquire answered 409 once, nobody else writing: token %d, %d PUTs, %d reaching the store; want token 1, 2 and 1", lease.Token, f.n, c.puts.Load())
		}
		// Renew and Release, answered 409 with nobody else writing, read
		// the record, find it theirs and write again.
		f.mu.Lock()
		f.n, f.plan = 0, func(n int) fault {
			if n%2 == 1 {
				return conflict
			}
			return pass
		}
		f.mu.Unlock()
		renewed, err := l.Renew(t.Context(), lease)
		if err != nil {
			t.Fatalf("Renew answered 409 once: %v", err)
		}
		if err := l.Release(t.Context(), renewed); err != nil {
			t.Fatalf("Release answered 409 once: %v", err)
		}
		if info := inspect(t, l, "k"); info.Held || info.Token != 1 {
			t.Fatalf("Inspect = %+v; want free with token 1", info)
		}
	})
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
func TestHangingStoreReturnsWithTheContext(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l := newLocker(t, bucket, hang{}, &Options{Backoff: time.Millisecond})
	lease := fence.Lease{Key: "k", Owner: fence.NewOwnerID(), Token: 1, TTL: MinTTL, ValidUntil: time.Now().Add(time.Hour)}
	calls := map[string]func(ctx context.Context) error{
		"Acquire": func(ctx context.Context) error { _, err := l.Acquire(ctx, "k", MinTTL, nil); return err },
		"Inspect": func(ctx context.Context) error { _, err := l.Inspect(ctx, "k"); return err },
		"Break":   func(ctx context.Context) error { return l.Break(ctx, "k") },
		"Renew":   func(ctx context.Context) error { _, err := l.Renew(ctx, lease); return err },
		"Release": func(ctx context.Context) error { return l.Release(ctx, lease) },
		"Create":  func(ctx context.Context) error { return l.Create(ctx) },
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
