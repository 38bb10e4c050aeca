package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/memory"
)

// A Lock waiting for a busy key returns ErrSessionClosed, holding
// nothing, when its session is closed.
func TestWaitingLockEndsWithItsSession(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	holder, err := l.Acquire(t.Context(), "k", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fence.NewSession(l, &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Lock(t.Context(), "k", &fence.LockOptions{Wait: fence.WaitForever})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it wait (if not yet, it finds the session closed)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, fence.ErrSessionClosed) {
			t.Fatalf("Lock after Close = %v; want an error matching ErrSessionClosed", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a waiting Lock did not return a minute after its session closed")
	}
	if err := l.Release(t.Context(), holder); err != nil {
		t.Fatal(err)
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("the closed session holds %d handles", n)
	}
}
