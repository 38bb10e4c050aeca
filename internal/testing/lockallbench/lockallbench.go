// Package lockallbench holds the loop of every locker package's
// BenchmarkLockAll: Session.LockAll of n keys against n Session.Lock
// calls one after another, on one store, side by side in one run.
//
// A package's benchmark builds two Sides, each on a Locker (and, where it
// can count them, a client) of its own on the same store, and calls Run
// once per number of keys:
//
//	func BenchmarkLockAll(b *testing.B) {
//		for _, n := range []int{2, 8} {
//			b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
//				lockallbench.Run(b, n, side(b), side(b), time.Minute)
//			})
//		}
//	}
package lockallbench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// Side is one contender of Run: a Locker and, when not nil, the number of
// requests its client has sent so far.
type Side struct {
	Locker   *fence.Locker
	Requests func() int64
}

// Run compares, on the Lockers of all and locks (each with a session of
// ttl and keys of its own), a cycle of Session.LockAll of n keys and the
// release of every handle with a cycle of n Session.Lock calls one after
// another and the release of every handle. Each iteration runs one cycle
// of each side, the order alternating from one iteration to the next, so
// that both share the machine's moods. Before timing, each side runs one
// cycle: it opens connections, prepares statements, grants shared
// leases, and a driver may learn then that its store cannot take the keys
// at once.
//
// It reports, per iteration:
//
//   - lockall-ns/op, locks-ns/op: the mean time of each side's cycle;
//   - lockall/locks: the median over the iterations of the LockAll
//     cycle's time over the Locks cycle's;
//   - total-lockall/locks: the LockAll side's total time over the Locks
//     side's (outliers weigh in it, not in the median);
//   - lockall-req/op, locks-req/op: the requests of each side's cycle,
//     releases included, where that side counts them;
//   - req/lockall: the requests of the LockAll call alone, releases not
//     included, where the LockAll side counts them.
func Run(b *testing.B, n int, all, locks Side, ttl time.Duration) {
	opts := &fence.SessionOptions{TTL: ttl}
	sAll, sLocks := waittest.NewSession(b, all.Locker, opts), waittest.NewSession(b, locks.Locker, opts)
	keys := func(prefix string) []string {
		k := make([]string, n)
		for i := range k {
			k[i] = fmt.Sprintf("%s-%02d", prefix, i)
		}
		return k
	}
	allKeys, lockKeys := keys("lockall"), keys("locks")
	count := func(s Side) int64 {
		if s.Requests == nil {
			return 0
		}
		return s.Requests()
	}
	ctx := b.Context()
	var reqLockAll int64 // requests of the LockAll calls alone
	lockAll := func() {
		before := count(all)
		hs, err := sAll.LockAll(ctx, allKeys, nil)
		if err != nil {
			b.Fatal(err)
		}
		reqLockAll += count(all) - before
		release(b, hs)
	}
	lockEach := func() {
		hs := make([]*fence.Handle, 0, n)
		for _, k := range lockKeys {
			h, err := sLocks.Lock(ctx, k, nil)
			if err != nil {
				b.Fatal(err)
			}
			hs = append(hs, h)
		}
		release(b, hs)
	}
	lockAll()
	lockEach()
	reqLockAll = 0
	reqAll0, reqLocks0 := count(all), count(locks)
	var tAll, tLocks time.Duration
	var ratios []float64
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	iters := 0
	for b.Loop() {
		var x, y time.Duration
		if iters%2 == 0 {
			x, y = timed(lockAll), timed(lockEach)
		} else {
			y, x = timed(lockEach), timed(lockAll)
		}
		tAll, tLocks = tAll+x, tLocks+y
		ratios = append(ratios, float64(x)/float64(y))
		iters++
	}
	perIter := func(v int64) float64 { return float64(v) / float64(iters) }
	slices.Sort(ratios)
	b.ReportMetric(perIter(tAll.Nanoseconds()), "lockall-ns/op")
	b.ReportMetric(perIter(tLocks.Nanoseconds()), "locks-ns/op")
	b.ReportMetric(ratios[len(ratios)/2], "lockall/locks")
	b.ReportMetric(float64(tAll)/float64(tLocks), "total-lockall/locks")
	if all.Requests != nil {
		b.ReportMetric(perIter(count(all)-reqAll0), "lockall-req/op")
		b.ReportMetric(perIter(reqLockAll), "req/lockall")
	}
	if locks.Requests != nil {
		b.ReportMetric(perIter(count(locks)-reqLocks0), "locks-req/op")
	}
}

// release releases every handle of hs, in order.
func release(b *testing.B, hs []*fence.Handle) {
	for _, h := range hs {
		if err := h.Release(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
