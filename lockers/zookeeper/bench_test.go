package zookeeper

import (
	"context"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
)

// The benchmarks compare fence's locker with the client library's own zk.Lock
// on the same server, side by side in one loop: each iteration runs one
// cycle of each, in alternating order, timing each, so that the machine's
// drift moves both alike. The ratios are medians over the iterations of
// fence's time over zk.Lock's. Run them with
//
//	go test -run '^$' -bench . -benchtime 300x -count 3 ./lockers/zookeeper/

// paired runs a(i) and z(i) once per iteration, in alternating order, and
// reports the medians and 99th percentiles of a's and z's times and the
// median of their ratio.
func paired(b *testing.B, aName, zName string, a, z func(i int)) {
	b.Helper()
	timed := func(f func(int)) func(int) time.Duration {
		return func(i int) time.Duration {
			start := time.Now()
			f(i)
			return time.Since(start)
		}
	}
	pairedTimes(b, aName, zName, timed(a), timed(z))
}

// pairedTimes is paired for functions that time themselves.
func pairedTimes(b *testing.B, aName, zName string, a, z func(i int) time.Duration) {
	b.Helper()
	var ta, tz, ratios []float64
	timed := func(f func(int) time.Duration, i int) float64 { return float64(f(i)) }
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
	pct := func(v []float64, p float64) float64 {
		slices.Sort(v)
		i := int(math.Ceil(p/100*float64(len(v)))) - 1
		return v[min(max(i, 0), len(v)-1)]
	}
	b.ReportMetric(pct(ta, 50)/1e6, aName+"_p50_ms")
	b.ReportMetric(pct(tz, 50)/1e6, zName+"_p50_ms")
	b.ReportMetric(pct(ta, 99)/1e6, aName+"_p99_ms")
	b.ReportMetric(pct(tz, 99)/1e6, zName+"_p99_ms")
	b.ReportMetric(pct(ratios, 50), aName+"/"+zName)
}

// BenchmarkAcquireRelease takes and frees a free key, one session each
// side: fence's Acquire and Release (the node's create; the children,
// the node's stat and the last record read in one round trip; the
// multi-operation writing the last record; the delete: two reads and
// three writes, the one of them a multi) against zk.Lock's Lock and
// Unlock (a protected create, and a create of the parents the first
// time; the children; the delete: one read and two writes).
func BenchmarkAcquireRelease(b *testing.B) {
	servers := sharedServers(b)
	root := uniqueRoot("bench")
	l := newTestLocker(b, connect(b, servers, testSessionTimeout), &Options{Root: root})
	zc := connect(b, servers, testSessionTimeout)
	ctx := b.Context()
	const keys = 16 // a few keys, so that each is free when taken
	paired(b, "fence", "zklock",
		func(i int) {
			lease, err := l.Acquire(ctx, "f"+strconv.Itoa(i%keys), time.Second, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		},
		func(i int) {
			m := zk.NewLock(zc, root+"/zk"+strconv.Itoa(i%keys), zk.WorldACL(zk.PermAll))
			if err := m.Lock(); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(); err != nil {
				b.Fatal(err)
			}
		})
}

// BenchmarkSessionLockRelease is the same through a fence.Session (TryLock
// and Release of a handle the session would keep renewed) against
// zk.Lock, which has no lease to renew.
func BenchmarkSessionLockRelease(b *testing.B) {
	servers := sharedServers(b)
	root := uniqueRoot("bench")
	l := newTestLocker(b, connect(b, servers, testSessionTimeout), &Options{Root: root})
	s, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(b.Context()) })
	zc := connect(b, servers, testSessionTimeout)
	ctx := b.Context()
	const keys = 16
	paired(b, "fence", "zklock",
		func(i int) {
			h, err := s.Lock(ctx, "f"+strconv.Itoa(i%keys), nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
		},
		func(i int) {
			m := zk.NewLock(zc, root+"/zk"+strconv.Itoa(i%keys), zk.WorldACL(zk.PermAll))
			if err := m.Lock(); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(); err != nil {
				b.Fatal(err)
			}
		})
}

// BenchmarkHandoff times a hand-off, from a holder's release to the
// return of a waiter blocked in line for the key, each waiter with a
// session of its own: fence's Session.Lock (woken by the watch of the
// holder's node, then one Acquire) against zk.Lock's Lock (its node
// queued before the wait, woken by the watch of its predecessor, then a
// listing of the children). Each waiter gets 100 ms to be in its wait
// before the release.
func BenchmarkHandoff(b *testing.B) {
	servers := sharedServers(b)
	root := uniqueRoot("handoff")
	holder := newTestLocker(b, connect(b, servers, testSessionTimeout), &Options{Root: root})
	waiter := newTestLocker(b, connect(b, servers, testSessionTimeout), &Options{Root: root})
	hs, err := fence.NewSession(holder.Locker, &fence.SessionOptions{TTL: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ws, err := fence.NewSession(waiter.Locker, &fence.SessionOptions{TTL: 5 * time.Second, PollInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = hs.Close(context.Background()); _ = ws.Close(context.Background()) })
	zh, zw := connect(b, servers, testSessionTimeout), connect(b, servers, testSessionTimeout)
	ctx := b.Context()
	pairedTimes(b, "fence", "zklock",
		func(i int) time.Duration {
			key := "f" + strconv.Itoa(i)
			h, err := hs.Lock(ctx, key, nil)
			if err != nil {
				b.Fatal(err)
			}
			got := make(chan time.Time, 1)
			go func() {
				w, err := ws.Lock(ctx, key, &fence.LockOptions{Wait: fence.WaitForever})
				at := time.Now()
				if err != nil {
					b.Error(err)
				} else {
					_ = w.Release(ctx)
				}
				got <- at
			}()
			time.Sleep(100 * time.Millisecond)
			start := time.Now()
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
			return (<-got).Sub(start)
		},
		func(i int) time.Duration {
			path := root + "/zk" + strconv.Itoa(i)
			h := zk.NewLock(zh, path, zk.WorldACL(zk.PermAll))
			if err := h.Lock(); err != nil {
				b.Fatal(err)
			}
			got := make(chan time.Time, 1)
			go func() {
				w := zk.NewLock(zw, path, zk.WorldACL(zk.PermAll))
				err := w.Lock()
				at := time.Now()
				if err != nil {
					b.Error(err)
				} else {
					_ = w.Unlock()
				}
				got <- at
			}()
			time.Sleep(100 * time.Millisecond)
			start := time.Now()
			if err := h.Unlock(); err != nil {
				b.Fatal(err)
			}
			return (<-got).Sub(start)
		})
}
