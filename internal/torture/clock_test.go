package torture

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/memory"
)

// The pausing driver keeps the capabilities of the one it wraps: a value
// published through it reaches the store, and a session's LockAll takes
// its keys in one acquire-all call.
func TestPausingPassesCapabilitiesOn(t *testing.T) {
	t.Parallel()
	store := memory.New(nil)
	l, err := (&pausable{}).wrap(store)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ops []string
	l.SetObserver(&fence.Observer{Call: func(ctx context.Context, c fence.Call) (context.Context, func(fence.Token, error)) {
		mu.Lock()
		ops = append(ops, c.Op)
		mu.Unlock()
		return ctx, nil
	}})
	s, err := fence.NewSession(l, &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.WithoutCancel(t.Context()))
	hs, err := s.LockAll(t.Context(), []string{"b", "a"}, nil)
	if err != nil {
		t.Fatalf("LockAll: %v", err)
	}
	if err := hs[0].Publish(t.Context(), "10.0.0.7:8080"); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if info, err := store.Inspect(t.Context(), "b"); err != nil || info.Value != "10.0.0.7:8080" {
		t.Fatalf("after Publish the store shows %+v, %v; want the value", info, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(ops, "acquire-all") || slices.Contains(ops, "acquire") {
		t.Fatalf("the store saw %v; want one acquire-all and no single acquire", ops)
	}
}
