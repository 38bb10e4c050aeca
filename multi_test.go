package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/lockers/memory"
)

// oneAtATime is the memory driver without driver.MultiAcquirer, so that a
// session takes several keys one at a time in order; it passes release
// notifications on.
type oneAtATime struct{ driver.Locker }

func (o oneAtATime) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return o.Locker.(driver.ReleaseNotifier).NotifyRelease(ctx, key)
}

// multiEnv is a memory store on a fake clock, seen by the test (mem) and
// by the Locker under test (l: mem itself, or mem without
// driver.MultiAcquirer).
type multiEnv struct {
	clk     *clocktest.Fake
	mem, l  *fence.Locker
	atomic  bool
	idle    int // timers armed while LockAll waits holding nothing
	holding int // timers armed while LockAll waits holding a key
}

const multiTTL = 30 * time.Second

// multiPaths are the two ways LockAll takes several keys.
var multiPaths = []struct {
	name   string
	atomic bool
}{{"atomic", true}, {"in-order", false}}

func newMultiEnv(t *testing.T, atomic bool) *multiEnv {
	t.Helper()
	clk := clocktest.New(time.Unix(1e9, 0))
	e := &multiEnv{clk: clk, mem: memory.New(&memory.Options{Clock: clk}), atomic: atomic, idle: 1, holding: 1}
	e.l = e.mem
	if !atomic {
		l, err := driver.Wrap(e.mem, func(d driver.Locker) driver.Locker { return oneAtATime{d} })
		if err != nil {
			t.Fatal(err)
		}
		e.l = l
		e.holding = 3 // the keepalive's two and the wait's one
	}
	return e
}

func (e *multiEnv) session(t *testing.T) *fence.Session {
	t.Helper()
	return newSession(t, e.l, &fence.SessionOptions{TTL: multiTTL, Clock: e.clk})
}

// hold takes key on the store for another process, for ten minutes.
func (e *multiEnv) hold(t *testing.T, key string) fence.Lease {
	t.Helper()
	lease, err := e.mem.Acquire(t.Context(), key, 10*time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	return lease
}

// wantFree fails unless no one holds key.
func (e *multiEnv) wantFree(t *testing.T, key, when string) {
	t.Helper()
	if info, err := e.mem.Inspect(t.Context(), key); err != nil || info.Held {
		t.Errorf("%s %s: %+v, %v; want it free", key, when, info, err)
	}
}

type lockAllResult struct {
	hs  []*fence.Handle
	err error
}

func goLockAll(ctx context.Context, s *fence.Session, keys []string, opts *fence.LockOptions) <-chan lockAllResult {
	out := make(chan lockAllResult, 1)
	go func() {
		hs, err := s.LockAll(ctx, keys, opts)
		out <- lockAllResult{hs, err}
	}()
	return out
}

// waitTimers waits until n timers are armed on e's clock.
func (e *multiEnv) waitTimers(t *testing.T, n int) {
	t.Helper()
	if err := e.clk.WaitTimers(t.Context(), n); err != nil {
		t.Fatal(err)
	}
}

// One wait budget for the whole set: a LockAll that waits up to 10 s,
// whose first key comes free after 6 s, gives up on the second 10 s after
// it started, not 10 s after it took the first; and gives the first back.
func TestLockAllWaitBudgetIsShared(t *testing.T) {
	t.Parallel()
	for _, p := range multiPaths {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			e := newMultiEnv(t, p.atomic)
			start := e.clk.Now()
			a, _ := e.hold(t, "a"), e.hold(t, "b")
			got := goLockAll(t.Context(), e.session(t), []string{"b", "a"}, &fence.LockOptions{Wait: 10 * time.Second})
			e.waitTimers(t, e.idle)
			e.clk.Advance(6 * time.Second)
			e.waitTimers(t, e.idle)
			if err := e.mem.Release(t.Context(), a); err != nil {
				t.Fatal(err)
			}
			if !e.atomic { // the session takes a, and waits for b
				for {
					info, err := e.mem.Inspect(t.Context(), "a")
					if err != nil {
						t.Fatal(err)
					}
					if info.Held {
						break
					}
					time.Sleep(time.Millisecond)
				}
			}
			e.waitTimers(t, e.holding)
			e.clk.Advance(4 * time.Second) // the budget's end
			select {
			case r := <-got:
				if he, ok := errors.AsType[*fence.HeldError](r.err); !ok || he.Key != "b" {
					t.Fatalf("LockAll after its budget: %v; want a *fence.HeldError on b", r.err)
				}
			case <-waitArmed(t, e.clk, e.holding):
				t.Fatalf("LockAll waits on at %v; want it to give up 10 s after it started", e.clk.Now().Sub(start))
			}
			e.wantFree(t, "a", "after LockAll gave up")
		})
	}
}

// waitArmed returns a channel closed once n timers are armed on clk.
func waitArmed(t *testing.T, clk *clocktest.Fake, n int) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		if clk.WaitTimers(t.Context(), n) == nil {
			close(c)
		}
	}()
	return c
}

// A LockAll waiting for its last key gives back what it took when its ctx
// ends; the atomic path never took anything.
func TestLockAllCancelledReleasesWhatItTook(t *testing.T) {
	t.Parallel()
	for _, p := range multiPaths {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			e := newMultiEnv(t, p.atomic)
			e.hold(t, "z")
			ctx, cancel := context.WithCancel(t.Context())
			got := goLockAll(ctx, e.session(t), []string{"z", "x", "y"}, &fence.LockOptions{Wait: fence.WaitForever})
			e.waitTimers(t, e.holding)
			for _, k := range []string{"x", "y"} {
				info, err := e.mem.Inspect(t.Context(), k)
				if err != nil {
					t.Fatal(err)
				}
				if info.Held == e.atomic {
					t.Fatalf("%s while LockAll waits for z: held %v; want %v", k, info.Held, !e.atomic)
				}
			}
			cancel()
			r := <-got
			if !errors.Is(r.err, context.Canceled) || r.hs != nil {
				t.Fatalf("LockAll cancelled: %v, %d handles; want context.Canceled and none", r.err, len(r.hs))
			}
			e.wantFree(t, "x", "after LockAll was cancelled")
			e.wantFree(t, "y", "after LockAll was cancelled")
		})
	}
}

// Closing the session: a later LockAll fails with ErrSessionClosed, and
// one waiting returns with it, holding nothing.
func TestLockAllSessionClosed(t *testing.T) {
	t.Parallel()
	for _, p := range multiPaths {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			e := newMultiEnv(t, p.atomic)
			e.hold(t, "q")
			s := e.session(t)
			got := goLockAll(t.Context(), s, []string{"p", "q"}, &fence.LockOptions{Wait: fence.WaitForever})
			e.waitTimers(t, e.holding)
			if err := s.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			r := <-got
			if !errors.Is(r.err, fence.ErrSessionClosed) || r.hs != nil {
				t.Fatalf("waiting LockAll at Close: %v, %d handles; want ErrSessionClosed and none", r.err, len(r.hs))
			}
			e.wantFree(t, "p", "after Close")
			if _, err := s.LockAll(t.Context(), []string{"p", "r"}, nil); !errors.Is(err, fence.ErrSessionClosed) {
				t.Fatalf("LockAll after Close: %v; want ErrSessionClosed", err)
			}
			e.wantFree(t, "p", "after a LockAll on a closed session")
		})
	}
}

// A LockAll that waits gets the whole set once its busy keys come free,
// one handle per key in the order asked, each with its own key's token.
func TestLockAllWaitsForEveryKey(t *testing.T) {
	t.Parallel()
	for _, p := range multiPaths {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			e := newMultiEnv(t, p.atomic)
			for range 3 { // different histories: different tokens
				e.mem.Release(t.Context(), e.hold(t, "k2"))
			}
			h1, h3 := e.hold(t, "k1"), e.hold(t, "k3")
			keys := []string{"k3", "k1", "k2"}
			got := goLockAll(t.Context(), e.session(t), keys, &fence.LockOptions{Wait: fence.WaitForever})
			e.waitTimers(t, e.idle)
			if err := e.mem.Release(t.Context(), h1); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(time.Second)
			if err := e.mem.Release(t.Context(), h3); err != nil {
				t.Fatal(err)
			}
			r := <-got
			if r.err != nil {
				t.Fatal(r.err)
			}
			want := map[string]fence.Token{"k1": 2, "k2": 4, "k3": 2}
			for i, h := range r.hs {
				if h.Key() != keys[i] || h.Token() != want[h.Key()] {
					t.Errorf("handle %d: %q token %d; want %q token %d", i, h.Key(), h.Token(), keys[i], want[keys[i]])
				}
			}
		})
	}
}

func TestLockAllRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newMultiEnv(t, true)
	s := e.session(t)
	tests := []struct {
		name string
		keys []string
		opts *fence.LockOptions
	}{
		{"no key", nil, nil},
		{"a key twice", []string{"a", "b", "a"}, nil},
		{"an empty key", []string{"a", ""}, nil},
		{"a negative wait", []string{"a", "b"}, &fence.LockOptions{Wait: -time.Second}},
		{"a key too long", []string{"a", string(make([]byte, memory.MaxKeyLen+1))}, nil},
	}
	for _, tc := range tests {
		if _, err := s.LockAll(t.Context(), tc.keys, tc.opts); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("LockAll with %s: %v; want ErrInvalid", tc.name, err)
		}
	}
	if info, err := e.mem.Inspect(t.Context(), "a"); err != nil || info.Token != 0 {
		t.Errorf("a after refused calls: %+v, %v; want never taken", info, err)
	}
}
