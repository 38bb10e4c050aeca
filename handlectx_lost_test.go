package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/memory"
)

// Contexts asked of a handle while the session's keepalive finds its
// lease lost do not race with the handle's end (under the race
// detector), and one asked after it is cancelled with the loss as its
// cause.
func TestHandleContextWhileLost(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	s, err := fence.NewSession(l, &fence.SessionOptions{TTL: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.WithoutCancel(t.Context()))
	for range 20 {
		h, err := s.Lock(t.Context(), "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Break(t.Context(), "k"); err != nil {
			t.Fatal(err)
		}
		var last context.Context
		for done := false; !done; {
			select {
			case <-h.Done():
				done = true
			default:
			}
			ctx, cancel := h.Context(t.Context())
			if !done {
				cancel()
				continue
			}
			last = ctx
			defer cancel()
		}
		if !errors.Is(context.Cause(last), fence.ErrLeaseLost) {
			t.Fatalf("a context asked after the loss ended with %v; want the loss", context.Cause(last))
		}
		_ = h.Release(t.Context())
	}
}
