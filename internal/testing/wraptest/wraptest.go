// Package wraptest checks a Locker that a test helper builds over another
// Locker's driver with driver.Wrap (a fault gate, a pausing clock). Such
// a wrapper must keep the capabilities of the driver it wraps: a
// capability it hid would make the portable Locker take another path
// (keys one at a time, no values), and the tests run through it would
// not measure the store's own.
package wraptest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/memory"
)

// KeepsCapabilities checks the Locker that wrap builds over a memory
// Locker: a session's LockAll of keys "b" and "a" through it gives their
// handles in that order and takes the keys in one acquire_all call of the
// driver (driver.MultiAcquirer), with no single acquire; and a value
// published through a handle reaches the memory store
// (driver.Publisher).
func KeepsCapabilities(t *testing.T, wrap func(store *fence.Locker) (*fence.Locker, error)) {
	t.Helper()
	ctx := t.Context()
	store := memory.New(nil)
	l, err := wrap(store)
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
	defer s.Close(context.WithoutCancel(ctx))
	hs, err := s.LockAll(ctx, []string{"b", "a"}, nil)
	if err != nil {
		t.Fatalf("LockAll: %v", err)
	}
	if len(hs) != 2 || hs[0].Key() != "b" || hs[1].Key() != "a" {
		t.Fatalf("LockAll gave %v, want handles of b and a", hs)
	}
	if err := hs[0].Publish(ctx, "10.0.0.7:8080"); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if info, err := store.Inspect(ctx, "b"); err != nil || info.Value != "10.0.0.7:8080" {
		t.Fatalf("after Publish the store shows %+v, %v; want the value", info, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(ops, "acquire_all") || slices.Contains(ops, "acquire") {
		t.Fatalf("the store saw %v; want one acquire_all and no single acquire", ops)
	}
}
