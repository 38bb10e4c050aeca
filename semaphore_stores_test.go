package fence_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// On every store: 2N processes, each with its own Locker and session,
// take a semaphore of N permits in turn, waiting for a permit each time.
// Never more than N hold it at once, every process gets a permit three
// times (none starves), and the first permit is held for two TTLs,
// renewed by its session.
func TestSemaphoreOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		const permits, rounds = 3, 3
		lockers := b.Lockers(t, 2*permits, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 40*ttl) // a bound on starvation
		defer cancel()
		var (
			holders, most atomic.Int32
			long          atomic.Bool
			mu            sync.Mutex
			slots         = map[string]bool{}
			wg            sync.WaitGroup
		)
		for p, l := range lockers {
			s := newSession(t, l, &fence.SessionOptions{TTL: ttl})
			wg.Go(func() {
				for round := range rounds {
					h, err := s.LockSemaphore(ctx, "pool", permits, &fence.LockOptions{Wait: fence.WaitForever})
					if err != nil {
						t.Errorf("process %d starved in round %d: %v", p, round, err)
						return
					}
					n := holders.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					mu.Lock()
					if slots[h.Key()] {
						t.Errorf("process %d: slot %q held twice at once", p, h.Key())
					}
					slots[h.Key()] = true
					mu.Unlock()
					hold := ttl / 4
					if long.CompareAndSwap(false, true) {
						hold = 2 * ttl
					}
					time.Sleep(hold)
					if err := h.Err(); err != nil {
						t.Errorf("process %d: %q after %v: %v", p, h.Key(), hold, err)
					}
					mu.Lock()
					slots[h.Key()] = false
					mu.Unlock()
					holders.Add(-1)
					if err := h.Release(t.Context()); err != nil {
						t.Errorf("process %d: release %q: %v", p, h.Key(), err)
					}
				}
			})
		}
		wg.Wait()
		if m := most.Load(); m > permits {
			t.Errorf("%d holders at once; want at most %d", m, permits)
		} else if m < permits {
			t.Logf("at most %d holders at once (of %d permits)", m, permits)
		}
	})
}
