package etcd

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// The benchmarks compare fence's locker with etcd's own concurrency.Mutex
// on the same server, side by side in one loop: each iteration runs one
// cycle of each, in alternating order, timing each, so that the machine's
// drift moves both alike. The ratios are medians over the iterations of
// fence's time over the Mutex's. Run them with
//
//	go test -run '^$' -bench . -benchtime 200x -count 3 ./lockers/etcd/

// percentile returns the p-th percentile (nearest rank) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// paired runs a(i) and z(i) once per iteration, in alternating order, and
// reports the median of a's and z's times and of their ratio.
func paired(b *testing.B, aName, zName string, a, z func(i int)) {
	b.Helper()
	var ta, tz, ratios []float64
	timed := func(f func(int), i int) float64 {
		start := time.Now()
		f(i)
		return float64(time.Since(start))
	}
	for i := 0; b.Loop(); i++ {
		var x, y float64
		if i%2 == 0 {
			x = timed(a, i)
			y = timed(z, i)
		} else {
			y = timed(z, i)
			x = timed(a, i)
		}
		ta, tz, ratios = append(ta, x), append(tz, y), append(ratios, x/y)
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(median(ta)/1e6, aName+"_ms")
	b.ReportMetric(median(tz)/1e6, zName+"_ms")
	b.ReportMetric(median(ratios), aName+"/"+zName)
}

// newMutexSession returns a concurrency.Session on c with a TTL of ttl,
// closed when the benchmark ends.
func newMutexSession(b *testing.B, c *clientv3.Client, ttl int) *concurrency.Session {
	b.Helper()
	s, err := concurrency.NewSession(c, concurrency.WithTTL(ttl))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkAcquireRelease takes and frees a key, one client each side:
// fence's Acquire and Release (one transaction each: two raft writes; the
// record attached to the Locker's shared lease, kept alive at most once a
// second beside an Acquire) against a Mutex's TryLock and Unlock on a
// long-lived concurrency.Session ("mutex": a transaction and a delete,
// two round trips and two raft writes, the session's lease granted once
// for all its locks); against fence's floor, its two transactions sent
// bare on the client ("floor"), and that floor against the Mutex
// ("floor-vs=mutex"); the same through a fence.Session's Lock
// and the handle's Release ("session-vs=mutex"); against a Mutex on a session of
// its own per lock ("mutex-own-session": NewSession, TryLock, Unlock,
// Close, which is what a lease per lock costs etcd's own API), and
// against Lock and Unlock ("mutex-lock").
func BenchmarkAcquireRelease(b *testing.B) {
	fc, mc := sharedClient(b), sharedClient(b)
	l := newTestLocker(b, fc, nil)
	ctx := b.Context()
	fenceCycle := func(i int) {
		lease, err := l.Acquire(ctx, "key-"+strconv.Itoa(i%16), time.Minute, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx, lease); err != nil {
			b.Fatal(err)
		}
	}
	pfx := uniquePrefix("mutex")
	b.Run("vs=mutex", func(b *testing.B) {
		s := newMutexSession(b, mc, 60)
		paired(b, "fence", "mutex", fenceCycle, func(i int) {
			m := concurrency.NewMutex(s, pfx+strconv.Itoa(i%16))
			if err := m.TryLock(ctx); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	// The floor: fence's own two transactions sent bare on the client,
	// on a concurrency.Session's lease (no owner ids, no checks, no
	// bookkeeping). The last record, written with the lock record so that
	// a free key still shows its last token and owner, and the release's
	// compare are in the floor, not in fence's layers.
	value := encodeRecord(fence.NewOwnerID())
	fpfx := uniquePrefix("floor")
	floorCycle := func(s *concurrency.Session) func(int) {
		return func(i int) {
			held, last := fpfx+"held/"+strconv.Itoa(i%16), fpfx+"last/"+strconv.Itoa(i%16)
			resp, err := mc.Txn(ctx).
				If(clientv3.Compare(clientv3.CreateRevision(held), "=", 0)).
				Then(clientv3.OpPut(held, value, clientv3.WithLease(s.Lease())), clientv3.OpPut(last, value)).
				Else(clientv3.OpGet(held)).
				Commit()
			if err != nil || !resp.Succeeded {
				b.Fatal(err, resp)
			}
			resp, err = mc.Txn(ctx).
				If(clientv3.Compare(clientv3.CreateRevision(held), "=", resp.Header.Revision),
					clientv3.Compare(clientv3.Value(held), "=", value)).
				Then(clientv3.OpDelete(held)).
				Else(clientv3.OpGet(held)).
				Commit()
			if err != nil || !resp.Succeeded {
				b.Fatal(err, resp)
			}
		}
	}
	b.Run("vs=floor", func(b *testing.B) {
		paired(b, "fence", "floor", fenceCycle, floorCycle(newMutexSession(b, mc, 60)))
	})
	b.Run("floor-vs=mutex", func(b *testing.B) {
		s := newMutexSession(b, mc, 60)
		paired(b, "floor", "mutex", floorCycle(s), func(i int) {
			m := concurrency.NewMutex(s, pfx+"f"+strconv.Itoa(i%16))
			if err := m.TryLock(ctx); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("session-vs=mutex", func(b *testing.B) {
		fs := waittest.NewSession(b, l.Locker, &fence.SessionOptions{TTL: time.Minute})
		s := newMutexSession(b, mc, 60)
		paired(b, "fence", "mutex", func(i int) {
			h, err := fs.Lock(ctx, "skey-"+strconv.Itoa(i%16), nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}, func(i int) {
			m := concurrency.NewMutex(s, pfx+"t"+strconv.Itoa(i%16))
			if err := m.TryLock(ctx); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("vs=mutex-lock", func(b *testing.B) {
		s := newMutexSession(b, mc, 60)
		paired(b, "fence", "mutex", fenceCycle, func(i int) {
			m := concurrency.NewMutex(s, pfx+"l"+strconv.Itoa(i%16))
			if err := m.Lock(ctx); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("vs=mutex-own-session", func(b *testing.B) {
		paired(b, "fence", "mutex", fenceCycle, func(i int) {
			s, err := concurrency.NewSession(mc, concurrency.WithTTL(60))
			if err != nil {
				b.Fatal(err)
			}
			m := concurrency.NewMutex(s, pfx+"s"+strconv.Itoa(i%16))
			if err := m.TryLock(ctx); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(ctx); err != nil {
				b.Fatal(err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkHandOff measures a hand-off between two clients: a holder
// frees a key for which a waiter on another client is blocked, and the
// time from the return of the release to the return of the waiter's lock
// call is one sample. Each iteration hands off once with fence (a
// fence.Session's Lock, woken by its watch of the lock record; PollInterval
// an hour, so a poll never wakes it) and once with a concurrency.Mutex
// (Lock, woken by its watch of the key before its own), in alternating
// order. p50 and p99 are over the run's iterations (run it with
// -benchtime 200x or more), and the ratios are fence's over the Mutex's.
//
// Each waiter is given settle to be in its wait before the release: the
// Mutex's waiter watches from the revision it read, and the server
// delivers the events of a watch that starts in the past from a loop that
// runs every 100 ms until the watch has caught up; a release before then
// waits for that loop (up to 100 ms), which is not what a waiter that
// has waited a while sees. fence's watch starts at the current revision.
func BenchmarkHandOff(b *testing.B) {
	const settle = 150 * time.Millisecond
	ctx := b.Context()
	prefix := uniquePrefix("handoff")
	la := newTestLocker(b, sharedClient(b), &Options{Prefix: prefix})
	lb := newTestLocker(b, sharedClient(b), &Options{Prefix: prefix})
	busy := make(chan struct{}, 1)
	holders := waittest.NewSession(b, la.Locker, &fence.SessionOptions{TTL: time.Minute})
	lb.SetObserver(&fence.Observer{
		AcquireAttempt: func(e fence.AcquireAttemptEvent) {
			if e.Outcome == fence.Busy {
				select {
				case busy <- struct{}{}:
				default:
				}
			}
		}})
	waiters := waittest.NewSession(b, lb.Locker, &fence.SessionOptions{TTL: time.Minute, PollInterval: time.Hour})
	ma, mb := newMutexSession(b, sharedClient(b), 60), newMutexSession(b, sharedClient(b), 60)
	mkey := uniquePrefix("handoff-mutex")

	fenceHandOff := func() time.Duration {
		h, err := holders.Lock(ctx, "hand-off", nil)
		if err != nil {
			b.Fatal(err)
		}
		got := make(chan waittest.Result, 1)
		go func() {
			w, err := waiters.Lock(ctx, "hand-off", &fence.LockOptions{Wait: fence.WaitForever})
			got <- waittest.Result{Handle: w, Err: err, At: time.Now()}
		}()
		<-busy
		time.Sleep(settle) // into its wait
		if err := h.Release(ctx); err != nil {
			b.Fatal(err)
		}
		released := time.Now()
		r := <-got
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		if err := r.Handle.Release(ctx); err != nil {
			b.Fatal(err)
		}
		return r.At.Sub(released)
	}
	mutexHandOff := func() time.Duration {
		holder := concurrency.NewMutex(ma, mkey)
		if err := holder.Lock(ctx); err != nil {
			b.Fatal(err)
		}
		waiter := concurrency.NewMutex(mb, mkey)
		got := make(chan time.Time, 1)
		errc := make(chan error, 1)
		go func() {
			err := waiter.Lock(ctx)
			got <- time.Now()
			errc <- err
		}()
		// The waiter is blocked once its key exists behind the holder's.
		for {
			resp, err := ma.Client().Get(ctx, mkey+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
			if err != nil {
				b.Fatal(err)
			}
			if resp.Count == 2 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(settle) // into its wait
		if err := holder.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
		released := time.Now()
		at := <-got
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
		if err := waiter.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
		return at.Sub(released)
	}
	var fs, ms []time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			fs = append(fs, fenceHandOff())
			ms = append(ms, mutexHandOff())
		} else {
			ms = append(ms, mutexHandOff())
			fs = append(fs, fenceHandOff())
		}
	}
	slices.Sort(fs)
	slices.Sort(ms)
	for _, p := range []float64{50, 99} {
		f, m := percentile(fs, p), percentile(ms, p)
		name := "p" + strconv.Itoa(int(p))
		b.ReportMetric(float64(f)/1e6, "fence_"+name+"_ms")
		b.ReportMetric(float64(m)/1e6, "mutex_"+name+"_ms")
		b.ReportMetric(float64(f)/float64(m), "fence/mutex_"+name)
	}
}
