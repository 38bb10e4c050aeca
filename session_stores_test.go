package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// On every store: a handle held for three TTLs is renewed in place by its
// session's keepalive, excludes another process all along, and releases
// at the end (with no stale copy anywhere to refuse); the key is free at
// once, with a higher token next.
func TestHandleOutlivesTTLOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		lockers := b.Lockers(t, 2, nil)
		s := newSession(t, lockers[0], &fence.SessionOptions{TTL: ttl})
		other := newSession(t, lockers[1], &fence.SessionOptions{TTL: ttl})
		h, err := s.Lock(t.Context(), "long", nil)
		if err != nil {
			t.Fatal(err)
		}
		first := h.Lease().ValidUntil
		for range 3 {
			select {
			case <-h.Done():
				t.Fatalf("lost after %v: %v", time.Until(first), h.Err())
			case <-time.After(ttl):
			}
			if _, err := other.Lock(t.Context(), "long", nil); !errors.Is(err, fence.ErrHeld) {
				t.Fatalf("another process's TryLock while the handle is held: %v; want ErrHeld", err)
			}
		}
		if !h.Lease().ValidUntil.After(first.Add(ttl)) {
			t.Errorf("ValidUntil %v after 3 TTLs, %v at acquisition: not renewed in place", h.Lease().ValidUntil, first)
		}
		if err := h.Release(t.Context()); err != nil {
			t.Fatalf("Release after 3 TTLs: %v", err)
		}
		if !errors.Is(h.Err(), fence.ErrReleased) {
			t.Errorf("Err after Release: %v; want ErrReleased", h.Err())
		}
		next, err := other.Lock(t.Context(), "long", nil)
		if err != nil {
			t.Fatalf("TryLock right after the release: %v", err)
		}
		if next.Token() <= h.Token() {
			t.Errorf("next token %d; want more than %d", next.Token(), h.Token())
		}
	})
}

// On every store: a Lock blocked in another process gets the key after
// the holder releases it, after an operator breaks it (the broken handle
// is lost by its next renewal), and after the holder crashed (its lease
// is never renewed nor released: the waiter gets the key once it
// expired).
func TestLockWaitsOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		lockers := b.Lockers(t, 2, nil)
		holder := newSession(t, lockers[0], &fence.SessionOptions{TTL: ttl})
		waiter := newSession(t, lockers[1], &fence.SessionOptions{TTL: ttl})
		wait := func(key string) <-chan *fence.Handle {
			got := make(chan *fence.Handle, 1)
			go func() {
				h, err := waiter.Lock(t.Context(), key, &fence.LockOptions{Wait: 10 * ttl})
				if err != nil {
					t.Errorf("Lock of %s: %v", key, err)
				}
				got <- h
			}()
			return got
		}
		check := func(got <-chan *fence.Handle, after fence.Token, what string) {
			t.Helper()
			h := <-got
			if h == nil {
				t.Fatalf("no handle after %s", what)
			}
			if h.Token() <= after {
				t.Errorf("token %d after %s; want more than %d", h.Token(), what, after)
			}
			if err := h.Release(t.Context()); err != nil {
				t.Errorf("release: %v", err)
			}
		}

		h, err := holder.Lock(t.Context(), "released", nil)
		if err != nil {
			t.Fatal(err)
		}
		got := wait("released")
		time.Sleep(ttl / 2)
		if err := h.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		check(got, h.Token(), "a release")

		h, err = holder.Lock(t.Context(), "broken", nil)
		if err != nil {
			t.Fatal(err)
		}
		got = wait("broken")
		time.Sleep(ttl / 2)
		if err := lockers[1].Break(t.Context(), "broken"); err != nil {
			t.Fatal(err)
		}
		check(got, h.Token(), "a break")
		select {
		case <-h.Done():
			if !errors.Is(h.Err(), fence.ErrLeaseLost) {
				t.Errorf("broken handle: %v; want ErrLeaseLost", h.Err())
			}
		case <-time.After(2 * ttl):
			t.Errorf("broken handle still not lost after 2 TTLs")
		}

		crashed, err := lockers[0].Acquire(t.Context(), "crashed", ttl, nil)
		if err != nil {
			t.Fatal(err)
		}
		check(wait("crashed"), crashed.Token, "the holder's crash")
	})
}

// On every store: one session holds several keys for two TTLs on one
// keepalive, and Close frees them all.
func TestSessionHoldsManyOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		lockers := b.Lockers(t, 2, nil)
		s, err := fence.NewSession(lockers[0], &fence.SessionOptions{TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{"m1", "m2", "m3", "m4", "m5"}
		var hs []*fence.Handle
		for _, k := range keys {
			h, err := s.Lock(t.Context(), k, nil)
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, h)
		}
		time.Sleep(2 * ttl)
		for _, h := range hs {
			if err := h.Err(); err != nil {
				t.Fatalf("%s after 2 TTLs: %v", h.Key(), err)
			}
			info, err := lockers[1].Inspect(t.Context(), h.Key())
			if err != nil || !info.Held || info.Token != h.Token() {
				t.Fatalf("%s after 2 TTLs: %+v, %v; want held with token %d", h.Key(), info, err, h.Token())
			}
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if _, err := lockers[1].Acquire(t.Context(), h.Key(), ttl, nil); err != nil {
				t.Errorf("%s after Close: %v; want it free", h.Key(), err)
			}
		}
	})
}
