package fence_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// On every store: three processes take overlapping sets of keys in
// crossing orders ({x, y}, {y, z}, {z, x}: a cycle, which deadlocks
// callers that lock in their own order), each waiting for its whole set.
// Every process gets its set six times, no key is ever held by two of them,
// each key's tokens rise from holder to holder, and the first set is held
// for 2.5 TTLs, renewed by its session in place.
func TestLockAllCrossingOrdersOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		sets := [][]string{{"x", "y"}, {"y", "z"}, {"z", "x"}}
		lockers := b.Lockers(t, len(sets)+1, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 40*ttl) // a bound on a deadlock
		defer cancel()
		var (
			mu      sync.Mutex
			holders = map[string]*atomic.Int32{"x": {}, "y": {}, "z": {}}
			last    = map[string]fence.Token{}
			long    atomic.Bool
			wg      sync.WaitGroup
		)
		for p, keys := range sets {
			s := newSession(t, lockers[p], &fence.SessionOptions{TTL: ttl})
			wg.Go(func() {
				for round := range 6 {
					hs, err := s.LockAll(ctx, keys, &fence.LockOptions{Wait: fence.WaitForever})
					if err != nil {
						t.Errorf("process %d, round %d: LockAll(%q): %v", p, round, keys, err)
						return
					}
					mu.Lock()
					for i, h := range hs {
						if h.Key() != keys[i] {
							t.Errorf("process %d: handle %d on %q; want %q", p, i, h.Key(), keys[i])
						}
						if n := holders[h.Key()].Add(1); n != 1 {
							t.Errorf("process %d: %q held by %d processes at once", p, h.Key(), n)
						}
						if h.Token() <= last[h.Key()] {
							t.Errorf("process %d: %q token %d after %d", p, h.Key(), h.Token(), last[h.Key()])
						}
						last[h.Key()] = h.Token()
					}
					mu.Unlock()
					hold := ttl / 10
					if long.CompareAndSwap(false, true) {
						hold = 5 * ttl / 2
					}
					time.Sleep(hold)
					for _, h := range hs {
						if err := h.Err(); err != nil {
							t.Errorf("process %d: %q after %v: %v", p, h.Key(), hold, err)
						}
						info, err := lockers[len(sets)].Inspect(t.Context(), h.Key())
						if err != nil || !info.Held || info.Token != h.Token() {
							t.Errorf("process %d: %q after %v: %+v, %v; want held with token %d", p, h.Key(), hold, info, err, h.Token())
						}
						holders[h.Key()].Add(-1)
					}
					for _, h := range hs {
						if err := h.Release(t.Context()); err != nil {
							t.Errorf("process %d: release %q: %v", p, h.Key(), err)
						}
					}
				}
			})
		}
		wg.Wait()
	})
}

// crashing is a driver that crashes, as its process would, when it is
// asked for key crashAt: that call and every later one reach nothing and
// block until their ctx ends.
type crashing struct {
	driver.Locker
	crashAt string
	crashed chan struct{} // closed at the crash
	once    sync.Once
}

func (c *crashing) dead(ctx context.Context) error {
	select {
	case <-c.crashed:
		<-ctx.Done()
		return fmt.Errorf("crashed: %w", ctx.Err())
	default:
		return nil
	}
}

func (c *crashing) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	if key == c.crashAt {
		c.once.Do(func() { close(c.crashed) })
	}
	if err := c.dead(ctx); err != nil {
		return fence.Lease{}, err
	}
	return c.Locker.Acquire(ctx, key, owner, ttl)
}

func (c *crashing) Renew(ctx context.Context, l fence.Lease) error {
	if err := c.dead(ctx); err != nil {
		return err
	}
	return c.Locker.Renew(ctx, l)
}

func (c *crashing) Release(ctx context.Context, l fence.Lease) error {
	if err := c.dead(ctx); err != nil {
		return err
	}
	return c.Locker.Release(ctx, l)
}

func (c *crashing) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	if err := c.dead(ctx); err != nil {
		return fence.LockInfo{}, err
	}
	return c.Locker.Inspect(ctx, key)
}

// On every store: a process that crashes in the middle of a LockAll taken
// one key at a time, holding the first key and asking for the second,
// never renews nor releases the first. Once its lease ran out, a contender
// waiting for the same set gets all of it, the first key with a higher
// token.
func TestLockAllAfterHolderCrashOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		lockers := b.Lockers(t, 2, nil)
		c := &crashing{crashAt: "set-b", crashed: make(chan struct{})}
		crashed, err := driver.Wrap(lockers[0], func(d driver.Locker) driver.Locker {
			c.Locker = d
			return c
		})
		if err != nil {
			t.Fatal(err)
		}
		dying := newSession(t, crashed, &fence.SessionOptions{TTL: ttl})
		dyingCtx, stop := context.WithCancel(t.Context())
		defer stop()
		dead := make(chan error, 1)
		go func() {
			_, err := dying.LockAll(dyingCtx, []string{"set-b", "set-a"}, &fence.LockOptions{Wait: fence.WaitForever})
			dead <- err
		}()
		select {
		case <-c.crashed:
		case err := <-dead:
			t.Fatalf("LockAll returned before the crash: %v", err)
		}
		before, err := lockers[1].Inspect(t.Context(), "set-a")
		if err != nil || !before.Held {
			t.Fatalf("set-a at the crash: %+v, %v; want held by the crashed process", before, err)
		}
		contender := newSession(t, lockers[1], &fence.SessionOptions{TTL: ttl})
		hs, err := contender.LockAll(t.Context(), []string{"set-a", "set-b"}, &fence.LockOptions{Wait: 10 * ttl})
		if err != nil {
			t.Fatalf("contender after the crash: %v; want the whole set once set-a's lease ran out", err)
		}
		if hs[0].Token() <= before.Token {
			t.Errorf("set-a token %d after the crash; want more than the crashed holder's %d", hs[0].Token(), before.Token)
		}
		for _, h := range hs {
			if err := h.Release(t.Context()); err != nil {
				t.Errorf("release %q: %v", h.Key(), err)
			}
		}
		stop()
		if err := <-dead; !errors.Is(err, context.Canceled) {
			t.Errorf("the crashed LockAll: %v; want it ended by its ctx", err)
		}
	})
}
