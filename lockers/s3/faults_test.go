package s3

import (
	"errors"
	"net/http"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/objlock/objlocktest"
)

// The faults of S3 that Cloud Storage does not have; the others are
// objlocktest's RunFaults (shared_test.go).

var (
	slowDown = objlocktest.Refuse(http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate (injected by the test).")
	conflict = objlocktest.Refuse(http.StatusConflict, "ConditionalRequestConflict", "A conflicting conditional operation is currently in progress (injected by the test).")
)

// faultyLocker returns a Locker whose PUTs go through an
// objlocktest.Faults with plan in front of a counter in front of MinIO,
// with fast retries.
func faultyLocker(t *testing.T, bucket string, plan func(n int) objlocktest.Fault) (*objlocktest.Locker, *objlocktest.Faults, *objlocktest.Counter) {
	t.Helper()
	return objlocktest.FaultyLocker(t, objHarness, bucket, plan, nil)
}

// S3's 503 SlowDown is taken as an unknown outcome: the object is read
// back, found unchanged, and the write tried again.
func TestSlowDownIsReadBackAndRetried(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l, f, c := faultyLocker(t, bucket, objlocktest.First(2, slowDown))
	lease := acquire(t, l, "k", MinTTL)
	if f.N() != 3 || c.Writes.Load() != 1 || c.Other.Load() != 3 || lease.Token != 1 {
		t.Fatalf("Acquire made %d PUTs, %d reaching the store, and %d GETs, token %d; want 3, 1, 3 (a look and two read-backs) and token 1", f.N(), c.Writes.Load(), c.Other.Load(), lease.Token)
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
		l, f, _ := faultyLocker(t, bucket, objlocktest.First(1, conflict))
		rival := newLocker(t, bucket, nil, nil)
		inspect(t, l, "k") // l remembers nothing held: it will write at once
		var won fence.Lease
		f.Before = func(n int) {
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
		l, f, c := faultyLocker(t, bucket, objlocktest.First(1, conflict))
		lease := acquire(t, l, "k", MinTTL)
		if lease.Token != 1 || f.N() != 2 || c.Writes.Load() != 1 {
			t.Fatalf("Acquire answered 409 once, nobody else writing: token %d, %d PUTs, %d reaching the store; want token 1, 2 and 1", lease.Token, f.N(), c.Writes.Load())
		}
		// Renew and Release, answered 409 with nobody else writing, read
		// the record, find it theirs and write again.
		f.SetPlan(func(n int) objlocktest.Fault {
			if n%2 == 1 {
				return conflict
			}
			return objlocktest.Pass
		})
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
