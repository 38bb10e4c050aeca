package coord_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

const permits = 4

// ttl is the lease of every benchmark on b: long enough that the
// session's renewals (every TTL/3) are rare next to the operations
// measured, and within the store's range.
func ttl(b testlockers.Backend) time.Duration { return max(b.MinTTL, 10*time.Second) }

// counter counts a Locker's store calls (fence.Observer.Call) into the
// phase it is in.
type counter struct {
	phase atomic.Int32
	calls [2]atomic.Int64
}

func (c *counter) observer() *fence.Observer {
	return &fence.Observer{Call: func(ctx context.Context, _ fence.Call) (context.Context, func(fence.Token, error)) {
		c.calls[c.phase.Load()].Add(1)
		return ctx, nil
	}}
}

// pair times two shapes of work, alternating which goes first on each
// iteration, and reports each one's time and store calls per iteration
// and their ratio (name, the first over the second).
type pair struct {
	names [2]string
	spent [2]time.Duration
	c     *counter
}

func (p *pair) run(b *testing.B, i int, f [2]func()) {
	for j := range 2 {
		k := (i + j) % 2
		p.c.phase.Store(int32(k))
		start := time.Now()
		f[k]()
		p.spent[k] += time.Since(start)
	}
}

func (p *pair) report(b *testing.B, ratio string) {
	n := float64(b.N)
	for k := range 2 {
		b.ReportMetric(float64(p.spent[k].Nanoseconds())/1e3/n, p.names[k]+"-µs/op")
		b.ReportMetric(float64(p.c.calls[k].Load())/n, p.names[k]+"-calls/op")
	}
	b.ReportMetric(float64(p.spent[0])/float64(p.spent[1]), ratio)
	b.ReportMetric(0, "ns/op") // the two shapes' own times say it
}

func session(b *testing.B, l *fence.Locker, bk testlockers.Backend) *fence.Session {
	b.Helper()
	s, err := fence.NewSession(l, &fence.SessionOptions{TTL: ttl(bk)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func release(b *testing.B, hs ...*fence.Handle) {
	for _, h := range hs {
		if err := h.Release(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLockAll: LockAll + release of n keys against n Session.Lock +
// release of the same keys, on one Locker, uncontended.
func BenchmarkLockAll(b *testing.B) {
	for _, bk := range testlockers.Backends {
		for _, n := range []int{2, 8} {
			b.Run(fmt.Sprintf("%s/keys=%d", bk.Name, n), func(b *testing.B) {
				l := bk.Lockers(b, 1, nil)[0]
				c := new(counter)
				l.SetObserver(c.observer())
				s := session(b, l, bk)
				keys := make([]string, n)
				for i := range keys {
					keys[i] = fmt.Sprintf("acct-%d", i)
				}
				p := &pair{names: [2]string{"lockall", "single"}, c: c}
				lockAll := func() {
					hs, err := s.LockAll(b.Context(), keys, nil)
					if err != nil {
						b.Fatal(err)
					}
					release(b, hs...)
				}
				single := func() {
					hs := make([]*fence.Handle, len(keys))
					for i, k := range keys {
						h, err := s.Lock(b.Context(), k, nil)
						if err != nil {
							b.Fatal(err)
						}
						hs[i] = h
					}
					release(b, hs...)
				}
				i := 0
				for b.Loop() {
					p.run(b, i, [2]func(){lockAll, single})
					i++
				}
				p.report(b, "lockall/single")
			})
		}
	}
}

// BenchmarkSemaphore: LockSemaphore + release of a free semaphore of 4
// permits against Lock + release of one key, on one Locker.
func BenchmarkSemaphore(b *testing.B) {
	for _, bk := range testlockers.Backends {
		b.Run(bk.Name, func(b *testing.B) {
			l := bk.Lockers(b, 1, nil)[0]
			c := new(counter)
			l.SetObserver(c.observer())
			s := session(b, l, bk)
			p := &pair{names: [2]string{"sem", "lock"}, c: c}
			sem := func() {
				h, err := s.LockSemaphore(b.Context(), "pool", permits, nil)
				if err != nil {
					b.Fatal(err)
				}
				release(b, h)
			}
			lock := func() {
				h, err := s.Lock(b.Context(), "job", nil)
				if err != nil {
					b.Fatal(err)
				}
				release(b, h)
			}
			i := 0
			for b.Loop() {
				p.run(b, i, [2]func(){sem, lock})
				i++
			}
			p.report(b, "sem/lock")
		})
	}
}

// fairFor is how long BenchmarkSemaphoreFairness runs on each store, and
// fairHold how long each permit is held.
const (
	fairFor  = 8 * time.Second
	fairHold = 20 * time.Millisecond
)

// BenchmarkSemaphoreFairness: 2 × 4 processes, each with its own Locker
// and Session, loop acquire (waiting) - hold 20 ms - release on a
// semaphore of 4 permits for 8 s; Jain's index of the permits each got.
func BenchmarkSemaphoreFairness(b *testing.B) {
	for _, bk := range testlockers.Backends {
		b.Run(bk.Name, func(b *testing.B) {
			lockers := bk.Lockers(b, 2*permits, nil)
			sessions := make([]*fence.Session, len(lockers))
			for i, l := range lockers {
				sessions[i] = session(b, l, bk)
			}
			got := make([]int, len(lockers))
			var most, holders atomic.Int32
			for range b.N {
				ctx, cancel := context.WithTimeout(b.Context(), fairFor)
				var wg sync.WaitGroup
				for i, s := range sessions {
					wg.Go(func() {
						for {
							h, err := s.LockSemaphore(ctx, "pool", permits, &fence.LockOptions{Wait: fence.WaitForever})
							if err != nil {
								if ctx.Err() == nil {
									b.Error(err)
								}
								return
							}
							n := holders.Add(1)
							for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
							}
							got[i]++
							time.Sleep(fairHold)
							holders.Add(-1)
							_ = h.Release(context.Background())
						}
					})
				}
				wg.Wait()
				cancel()
			}
			if m := most.Load(); m > permits {
				b.Errorf("%d holders at once; want at most %d", m, permits)
			}
			var sum, sq float64
			for _, x := range got {
				sum += float64(x)
				sq += float64(x) * float64(x)
			}
			if sq == 0 {
				b.Fatal("no permit taken")
			}
			b.ReportMetric(sum*sum/(float64(len(got))*sq), "jain")
			b.ReportMetric(sum/(fairFor.Seconds()*float64(b.N)), "permits/s")
			b.ReportMetric(float64(slices.Min(got))/float64(slices.Max(got)), "min/max")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkSemaphoreHandOff: one process holds every slot of a semaphore
// of 4 permits and another waits for one; the time from the holder's
// Release of a slot to the waiter's return. Against the same with a
// plain lock (one key, Session.Lock waiting), alternating.
func BenchmarkSemaphoreHandOff(b *testing.B) {
	for _, bk := range testlockers.Backends {
		b.Run(bk.Name, func(b *testing.B) {
			lockers := bk.Lockers(b, 2, nil)
			holder := session(b, lockers[0], bk)
			var attempts atomic.Int64
			lockers[1].SetObserver(&fence.Observer{AcquireAttempt: func(fence.AcquireAttemptEvent) { attempts.Add(1) }})
			waiter := session(b, lockers[1], bk)
			var lat [2][]time.Duration
			// handOff holds the busy keys through take, starts wait on
			// another goroutine, waits until it made busyAttempts attempts
			// (it then sleeps, subscribed to the store's notifications),
			// releases one and times the waiter's return.
			handOff := func(k int, hold []*fence.Handle, busyAttempts int64, wait func() (*fence.Handle, error)) {
				attempts.Store(0)
				done := make(chan *fence.Handle, 1)
				go func() {
					h, err := wait()
					if err != nil {
						b.Error(err)
					}
					done <- h
				}()
				for attempts.Load() < busyAttempts {
					time.Sleep(100 * time.Microsecond)
				}
				start := time.Now()
				release(b, hold[0])
				h := <-done
				lat[k] = append(lat[k], time.Since(start))
				if h != nil {
					release(b, h)
				}
				release(b, hold[1:]...)
			}
			sem := func() {
				hold := make([]*fence.Handle, permits)
				for i := range hold {
					h, err := holder.Lock(b.Context(), fence.SlotKey("pool", i), nil)
					if err != nil {
						b.Fatal(err)
					}
					hold[i] = h
				}
				// Two rounds over every slot: before and after subscribing.
				handOff(0, hold, 2*permits, func() (*fence.Handle, error) {
					return waiter.LockSemaphore(b.Context(), "pool", permits, &fence.LockOptions{Wait: fence.WaitForever})
				})
			}
			lock := func() {
				h, err := holder.Lock(b.Context(), "job", nil)
				if err != nil {
					b.Fatal(err)
				}
				handOff(1, []*fence.Handle{h}, 1, func() (*fence.Handle, error) {
					return waiter.Lock(b.Context(), "job", &fence.LockOptions{Wait: fence.WaitForever})
				})
			}
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					sem()
					lock()
				} else {
					lock()
					sem()
				}
				i++
			}
			p50 := func(d []time.Duration) time.Duration {
				slices.Sort(d)
				return d[len(d)/2]
			}
			s, l := p50(lat[0]), p50(lat[1])
			b.ReportMetric(float64(s.Microseconds())/1000, "sem-p50-ms")
			b.ReportMetric(float64(l.Microseconds())/1000, "lock-p50-ms")
			b.ReportMetric(float64(slices.Max(lat[0]).Microseconds())/1000, "sem-max-ms")
			b.ReportMetric(float64(s)/float64(l), "sem/lock")
			b.ReportMetric(0, "ns/op")
		})
	}
}
