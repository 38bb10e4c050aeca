package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

func TestSlotKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		i    int
		want string
	}{{"crawler", 0, "crawler#0"}, {"crawler", 3, "crawler#3"}, {"a/b", 255, "a/b#255"}} {
		if got := fence.SlotKey(tc.name, tc.i); got != tc.want {
			t.Errorf("SlotKey(%q, %d) = %q; want %q", tc.name, tc.i, got, tc.want)
		}
	}
}

func TestLockSemaphoreRefusesBadInput(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	s := newSession(t, l, nil)
	tests := []struct {
		name    string
		sem     string
		permits int
		opts    *fence.LockOptions
	}{
		{"no permit", "sem", 0, nil},
		{"negative permits", "sem", -1, nil},
		{"more than MaxPermits", "sem", fence.MaxPermits + 1, nil},
		{"an empty name", "", 2, nil},
		{"a negative wait", "sem", 2, &fence.LockOptions{Wait: -time.Second}},
		{"slot keys too long", string(make([]byte, memory.MaxKeyLen-1)), 10, nil},
	}
	for _, tc := range tests {
		if _, err := s.LockSemaphore(t.Context(), tc.sem, tc.permits, tc.opts); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("LockSemaphore with %s: %v; want ErrInvalid", tc.name, err)
		}
	}
	if s.Len() != 0 {
		t.Errorf("%d handles after refused calls; want none", s.Len())
	}
	// The bounds themselves are valid.
	for _, permits := range []int{1, fence.MaxPermits} {
		h, err := s.LockSemaphore(t.Context(), "bounds", permits, nil)
		if err != nil {
			t.Fatalf("LockSemaphore with %d permits: %v", permits, err)
		}
		if err := h.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// permits handles hold a semaphore at once, each on its own slot; one
// more is refused (ErrHeld) until one is released, and then gets that
// slot with a higher token.
func TestLockSemaphoreHoldsAtMostPermits(t *testing.T) {
	t.Parallel()
	const permits = 4
	l := memory.New(nil)
	s := newSession(t, l, nil)
	slots := map[string]*fence.Handle{}
	for range permits {
		h, err := s.LockSemaphore(t.Context(), "pool", permits, nil)
		if err != nil {
			t.Fatal(err)
		}
		if slots[h.Key()] != nil {
			t.Fatalf("two handles on slot %q", h.Key())
		}
		slots[h.Key()] = h
	}
	for i := range permits {
		if slots[fence.SlotKey("pool", i)] == nil {
			t.Fatalf("slot %d not taken: %v", i, slots)
		}
	}
	if _, err := s.LockSemaphore(t.Context(), "pool", permits, nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("LockSemaphore with every permit taken: %v; want ErrHeld", err)
	}
	freed := slots[fence.SlotKey("pool", 2)]
	if err := freed.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	h, err := s.LockSemaphore(t.Context(), "pool", permits, nil)
	if err != nil {
		t.Fatalf("LockSemaphore after a release: %v", err)
	}
	if h.Key() != freed.Key() || h.Token() <= freed.Token() {
		t.Errorf("after the release of %q (token %d): %q token %d; want the freed slot with a higher token", freed.Key(), freed.Token(), h.Key(), h.Token())
	}
}

// A waiting LockSemaphore takes the slot that another process releases,
// woken by the store's notification (the fake clock never moves); a
// cancelled one returns with its ctx; a session's Close ends one waiting.
func TestLockSemaphoreWaits(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Unix(1e9, 0))
	mem := memory.New(&memory.Options{Clock: clk})
	s := newSession(t, otherProcess(t, mem), &fence.SessionOptions{Clock: clk})
	var held []fence.Lease
	var err error
	for i := range 3 {
		lease, err := mem.Acquire(t.Context(), fence.SlotKey("w", i), time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, lease)
	}
	type result struct {
		h   *fence.Handle
		err error
	}
	wait := func(ctx context.Context, s *fence.Session) <-chan result {
		out := make(chan result, 1)
		go func() {
			h, err := s.LockSemaphore(ctx, "w", 3, &fence.LockOptions{Wait: fence.WaitForever})
			out <- result{h, err}
		}()
		if err := clk.WaitTimers(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := wait(t.Context(), s)
	if err := mem.Release(t.Context(), held[1]); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || r.h.Key() != fence.SlotKey("w", 1) {
		t.Fatalf("waiting LockSemaphore after slot 1's release: %v, %v; want slot 1", r.h, r.err)
	}
	if err := r.h.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	held[1], err = mem.Acquire(t.Context(), fence.SlotKey("w", 1), time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	for clk.Timers() > 0 { // the keepalive, holding nothing, stops
		time.Sleep(time.Millisecond)
	}

	ctx, cancel := context.WithCancel(t.Context())
	got = wait(ctx, s)
	cancel()
	if r := <-got; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled LockSemaphore: %v; want context.Canceled", r.err)
	}

	other := newSession(t, otherProcess(t, mem), &fence.SessionOptions{Clock: clk})
	got = wait(t.Context(), other)
	if err := other.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := <-got; !errors.Is(r.err, fence.ErrSessionClosed) {
		t.Fatalf("waiting LockSemaphore at Close: %v; want ErrSessionClosed", r.err)
	}
	if _, err := other.LockSemaphore(t.Context(), "w", 3, nil); !errors.Is(err, fence.ErrSessionClosed) {
		t.Fatalf("LockSemaphore after Close: %v; want ErrSessionClosed", err)
	}
}

// A holder whose slot lease ran out (its process paused: its session's
// clock stands still, so it never renews) and was taken again is fenced:
// the resource bound to its slot refuses its write once the new holder
// wrote, whatever the stale holder believes.
func TestLockSemaphoreStaleSlotHolderIsFenced(t *testing.T) {
	t.Parallel()
	store := clocktest.New(time.Unix(1e9, 0))
	mem := memory.New(&memory.Options{Clock: store})
	res := memres.New(nil)
	const ttl = 30 * time.Second
	paused := newSession(t, otherProcess(t, mem), &fence.SessionOptions{TTL: ttl, Clock: clocktest.New(time.Unix(1e9, 0))})
	live := newSession(t, otherProcess(t, mem), &fence.SessionOptions{TTL: ttl, Clock: store})

	if _, err := mem.Acquire(t.Context(), fence.SlotKey("upload", 0), time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	stale, err := paused.LockSemaphore(t.Context(), "upload", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stale.Key() != fence.SlotKey("upload", 1) {
		t.Fatalf("got %q; want the one free slot", stale.Key())
	}
	staleWrite, err := fence.Bind(res, stale, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := staleWrite.Put(t.Context(), []byte("first")); err != nil {
		t.Fatal(err)
	}
	if _, err := live.LockSemaphore(t.Context(), "upload", 2, nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("LockSemaphore while both slots are held: %v; want ErrHeld", err)
	}
	store.Advance(ttl + time.Second) // the paused holder's lease runs out
	fresh, err := live.LockSemaphore(t.Context(), "upload", 2, nil)
	if err != nil {
		t.Fatalf("LockSemaphore after the stale holder's lease ran out: %v", err)
	}
	if fresh.Key() != stale.Key() || fresh.Token() <= stale.Token() {
		t.Fatalf("got %q token %d; want %q with a token above %d", fresh.Key(), fresh.Token(), stale.Key(), stale.Token())
	}
	freshWrite, err := fence.Bind(res, fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := freshWrite.Put(t.Context(), []byte("second")); err != nil {
		t.Fatal(err)
	}
	if err := stale.Err(); err != nil {
		t.Fatalf("the paused holder noticed its loss (%v); the test needs it unaware", err)
	}
	err = staleWrite.Put(t.Context(), []byte("stale"))
	if se, ok := errors.AsType[*fence.StaleTokenError](err); !ok || !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("stale holder's write: %v; want a *fence.StaleTokenError", err)
	} else if se.Token != stale.Token() {
		t.Errorf("StaleTokenError %+v; want the stale token %d", se, stale.Token())
	}
	v, tok, err := freshWrite.Get(t.Context())
	if err != nil || string(v) != "second" || tok != fresh.Token() {
		t.Errorf("resource after the stale write: %q token %d, %v; want the new holder's value", v, tok, err)
	}
}

// A session that releases a permit and at once asks again, waiting,
// leaves the permit to a waiter of another session first: with one
// permit, the waiter gets it, and the re-asking session gets it back
// only when the waiter lets go.
func TestSemaphoreReleaserLetsAWaiterGoFirst(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	newSess := func() *fence.Session {
		s, err := fence.NewSession(l, &fence.SessionOptions{TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		return s
	}
	a, b := newSess(), newSess()
	wait := &fence.LockOptions{Wait: time.Minute}
	for round := range 20 {
		held, err := a.LockSemaphore(t.Context(), "sem", 1, wait)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *fence.Handle, 1)
		go func() {
			h, err := b.LockSemaphore(t.Context(), "sem", 1, wait)
			if err != nil {
				t.Error(err)
			}
			got <- h
		}()
		time.Sleep(5 * time.Millisecond) // b waits
		if err := held.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		again := make(chan *fence.Handle, 1)
		go func() {
			h, err := a.LockSemaphore(t.Context(), "sem", 1, wait)
			if err != nil {
				t.Error(err)
			}
			again <- h
		}()
		var hb *fence.Handle
		select {
		case hb = <-got:
		case h := <-again:
			t.Fatalf("round %d: the releasing session took the permit back (token %d) before the waiter", round, h.Token())
		}
		if err := hb.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := (<-again).Release(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}
