package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
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
