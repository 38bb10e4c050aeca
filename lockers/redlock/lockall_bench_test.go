package redlock

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// BenchmarkLockAll compares Session.LockAll of n keys with n Session.Lock
// calls one after another, each followed by the release of every handle,
// on three masters of the benchmark's own, each side on a Locker of its
// own; each iteration runs one cycle of each, in alternating order. The
// store takes no set at once (see the package doc), so LockAll takes the
// keys one at a time in order: the figure is that path's cost over plain
// Locks, for reference. It reports each side's mean time per cycle and
// the median over the iterations of LockAll's time over the Locks'. Run
// it with
//
//	go test -run '^$' -bench LockAll -benchtime 300x -count 5 ./lockers/redlock/
func BenchmarkLockAll(b *testing.B) {
	ms := startMasters(b, 3, volatile)
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			prefix := fmt.Sprintf("bench-lockall-%d:", n)
			all := newLocker(b, ms, &Options{Prefix: prefix})
			one := newLocker(b, ms, &Options{Prefix: prefix})
			benchLockAll(b, n, all, one, 10*time.Second, nil)
		})
	}
}

// benchLockAll runs BenchmarkLockAll's loop with LockAll on all and the
// Locks on one, sessions of ttl; count, if not nil, counts the requests
// of all's client.
func benchLockAll(b *testing.B, n int, all, one *fence.Locker, ttl time.Duration, count func() int64) {
	ctx := context.Background()
	newSession := func(l *fence.Locker) *fence.Session {
		s, err := fence.NewSession(l, &fence.SessionOptions{TTL: ttl})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close(context.Background()) })
		return s
	}
	sAll, sOne := newSession(all), newSession(one)
	allKeys, oneKeys := make([]string, n), make([]string, n)
	for i := range n {
		allKeys[i], oneKeys[i] = fmt.Sprintf("all-%d", i), fmt.Sprintf("one-%d", i)
	}
	release := func(hs []*fence.Handle) {
		for _, h := range hs {
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if count == nil {
		count = func() int64 { return 0 }
	}
	var reqs int64
	lockAll := func() {
		before := count()
		hs, err := sAll.LockAll(ctx, allKeys, nil)
		if err != nil {
			b.Fatal(err)
		}
		reqs += count() - before
		release(hs)
	}
	locks := func() {
		hs := make([]*fence.Handle, 0, n)
		for _, k := range oneKeys {
			h, err := sOne.Lock(ctx, k, nil)
			if err != nil {
				b.Fatal(err)
			}
			hs = append(hs, h)
		}
		release(hs)
	}
	lockAll() // warm both: connections, shared leases
	locks()
	reqs = 0
	var tAll, tOne time.Duration
	var ratios []float64
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	iters := 0
	for i := 0; b.Loop(); i++ {
		var x, y time.Duration
		if i%2 == 0 {
			x, y = timed(lockAll), timed(locks)
		} else {
			y, x = timed(locks), timed(lockAll)
		}
		tAll, tOne = tAll+x, tOne+y
		ratios = append(ratios, float64(x)/float64(y))
		iters++
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(tAll.Nanoseconds())/float64(iters), "lockall-ns/op")
	b.ReportMetric(float64(tOne.Nanoseconds())/float64(iters), "locks-ns/op")
	b.ReportMetric(ratios[len(ratios)/2], "lockall/locks")
	if reqs > 0 {
		b.ReportMetric(float64(reqs)/float64(iters), "req/lockall")
	}
}
