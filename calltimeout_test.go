package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/netfault"
	"github.com/fencekit/fence/lockers/memory"
)

// waitingAcquire is a driver whose Acquire waits for its context.
type waitingAcquire struct{ driver.Locker }

func (w waitingAcquire) Acquire(ctx context.Context, _, _ string, _ time.Duration) (fence.Lease, error) {
	<-ctx.Done()
	return fence.Lease{}, ctx.Err()
}

// A store call that waits for its context gives up after CallTimeout,
// and Lock returns, even when the caller's context has no deadline.
func TestLockCallGivesUpAfterCallTimeout(t *testing.T) {
	t.Parallel()
	l, err := driver.Wrap(memory.New(nil), func(d driver.Locker) driver.Locker { return waitingAcquire{d} })
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(t, l, &fence.SessionOptions{TTL: time.Second, CallTimeout: 20 * time.Millisecond})
	if h, err := s.Lock(context.Background(), "k", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock = %v, %v; want an error matching context.DeadlineExceeded", h, err)
	}
}

// hungStore is a driver whose every call waits for its context: a store
// that accepts requests and never answers.
type hungStore struct{ driver.Locker }

func (hungStore) Acquire(ctx context.Context, _, _ string, _ time.Duration) (fence.Lease, error) {
	<-ctx.Done()
	return fence.Lease{}, ctx.Err()
}

func (hungStore) Inspect(ctx context.Context, _ string) (fence.LockInfo, error) {
	<-ctx.Done()
	return fence.LockInfo{}, ctx.Err()
}

// hungMulti is hungStore taking sets of keys in one operation, which
// never answers either.
type hungMulti struct{ hungStore }

func (hungMulti) AcquireAll(ctx context.Context, _, _ []string, _ time.Duration) ([]fence.Lease, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// Lock and LockAll on a store that never answers return once their
// context is done, although the read that settles an attempt whose answer
// was lost has a CallTimeout of its own: the read goes on without them.
func TestLockReturnsWithItsContextOnAHungStore(t *testing.T) {
	t.Parallel()
	l, err := driver.Wrap(memory.New(nil), func(d driver.Locker) driver.Locker { return hungStore{d} })
	if err != nil {
		t.Fatal(err)
	}
	m, err := driver.Wrap(memory.New(nil), func(d driver.Locker) driver.Locker { return hungMulti{hungStore{d}} })
	if err != nil {
		t.Fatal(err)
	}
	opts := &fence.SessionOptions{TTL: time.Hour, CallTimeout: 20 * time.Minute}
	s, sm := newSession(t, l, opts), newSession(t, m, opts)
	netfault.ReturnWithContext(t, 50*time.Millisecond, map[string]func(ctx context.Context) error{
		"Lock":            func(ctx context.Context) error { _, err := s.Lock(ctx, "k", nil); return err },
		"LockAll":         func(ctx context.Context) error { _, err := s.LockAll(ctx, []string{"a", "b"}, nil); return err },
		"LockAll at once": func(ctx context.Context) error { _, err := sm.LockAll(ctx, []string{"a", "b"}, nil); return err },
	})
}
