package sqlite_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// BenchmarkLockAll compares, for 2 and 8 keys, a Session.LockAll of
// the keys and the release of its handles (multi: one write transaction
// for the keys, then one statement per release) with as many
// Session.Lock calls one after another and their releases (single), on
// one file, each side on a Locker (a database) of its own, alternating
// which goes first at each iteration. It reports each side's time per
// cycle and their ratio (multi/single).
func BenchmarkLockAll(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run("keys="+strconv.Itoa(n), func(b *testing.B) {
			url := "sqlite://" + b.TempDir() + "/locks.db"
			open := func() *fence.Locker {
				l, err := fence.OpenLocker(b.Context(), url, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = l.Close() })
				return l
			}
			benchLockAll(b, n, open(), open(), nil, nil)
		})
	}
}

// benchLockAll runs BenchmarkLockAll's loop on the Lockers multi and
// single; requests, when not nil, count each side's requests.
func benchLockAll(b *testing.B, n int, multi, single *fence.Locker, reqMulti, reqSingle func() int) {
	ctx := b.Context()
	newSession := func(l *fence.Locker) *fence.Session {
		s, err := fence.NewSession(l, &fence.SessionOptions{TTL: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close(ctx) })
		return s
	}
	sm, ss := newSession(multi), newSession(single)
	mkeys, skeys := make([]string, n), make([]string, n)
	for i := range n {
		mkeys[i], skeys[i] = fmt.Sprintf("multi-%d", i), fmt.Sprintf("single-%d", i)
	}
	release := func(hs []*fence.Handle) {
		for _, h := range hs {
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	var tMulti, tSingle time.Duration
	var nMulti, nSingle int
	counting := reqMulti != nil
	if !counting {
		reqMulti, reqSingle = func() int { return 0 }, func() int { return 0 }
	}
	runMulti := func() {
		before := reqMulti()
		start := time.Now()
		hs, err := sm.LockAll(ctx, mkeys, nil)
		if err != nil {
			b.Fatal(err)
		}
		release(hs)
		tMulti += time.Since(start)
		nMulti += reqMulti() - before
	}
	runSingle := func() {
		before := reqSingle()
		start := time.Now()
		hs := make([]*fence.Handle, n)
		for i, k := range skeys {
			h, err := ss.Lock(ctx, k, nil)
			if err != nil {
				b.Fatal(err)
			}
			hs[i] = h
		}
		release(hs)
		tSingle += time.Since(start)
		nSingle += reqSingle() - before
	}
	runMulti() // the first of each prepares its statements
	runSingle()
	tMulti, tSingle, nMulti, nSingle = 0, 0, 0, 0
	iters := 0
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			runMulti()
			runSingle()
		} else {
			runSingle()
			runMulti()
		}
		iters++
	}
	b.ReportMetric(float64(tMulti.Nanoseconds())/float64(iters), "multi-ns/op")
	b.ReportMetric(float64(tSingle.Nanoseconds())/float64(iters), "single-ns/op")
	b.ReportMetric(float64(tMulti)/float64(tSingle), "multi/single")
	if counting {
		b.ReportMetric(float64(nMulti)/float64(iters), "multi-req/op")
		b.ReportMetric(float64(nSingle)/float64(iters), "single-req/op")
	}
}
