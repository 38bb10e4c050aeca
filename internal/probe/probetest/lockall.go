package probetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// Side is one Locker of LockAll, with a count of the requests it sends
// (nil when they are not counted).
type Side struct {
	Locker   *fence.Locker
	Requests func() int
}

// LockAll measures Session.LockAll of n keys and their release against n
// Session.Lock calls one after another and their release, on the same
// store, each on its own Locker and keys. Each iteration makes one
// cycle of each, in an order that alternates from one iteration to the
// next, so that the two share the machine's moods. Before timing, each
// side makes one cycle (a driver may learn then that its store cannot
// take the keys at once). It reports the mean time of a cycle of each
// side (lockall_ns, sequential_ns), their ratio (ratio), and the
// requests per cycle of each side where counted.
func LockAll(b *testing.B, n int, all, seq Side) {
	opts := &fence.SessionOptions{TTL: time.Minute}
	sa, ss := waittest.NewSession(b, all.Locker, opts), waittest.NewSession(b, seq.Locker, opts)
	keys := func(prefix string) []string {
		k := make([]string, n)
		for i := range k {
			k[i] = fmt.Sprintf("%s-%02d", prefix, i)
		}
		return k
	}
	ka, ks := keys("lockall"), keys("sequential")
	ctx := b.Context()
	lockAll := func() {
		hs, err := sa.LockAll(ctx, ka, nil)
		if err != nil {
			b.Fatal(err)
		}
		release(b, hs)
	}
	sequential := func() {
		hs := make([]*fence.Handle, 0, n)
		for _, k := range ks {
			h, err := ss.Lock(ctx, k, nil)
			if err != nil {
				b.Fatal(err)
			}
			hs = append(hs, h)
		}
		release(b, hs)
	}
	lockAll()
	sequential()
	var ta, ts time.Duration
	var ra, rs int
	count := func(s Side) int {
		if s.Requests == nil {
			return 0
		}
		return s.Requests()
	}
	ra0, rs0 := count(all), count(seq)
	cycles := 0
	for b.Loop() {
		first, second := lockAll, sequential
		tFirst, tSecond := &ta, &ts
		if cycles%2 == 1 {
			first, second = sequential, lockAll
			tFirst, tSecond = &ts, &ta
		}
		start := time.Now()
		first()
		mid := time.Now()
		second()
		*tFirst += mid.Sub(start)
		*tSecond += time.Since(mid)
		cycles++
	}
	ra, rs = count(all)-ra0, count(seq)-rs0
	b.ReportMetric(float64(ta.Nanoseconds())/float64(cycles), "lockall_ns")
	b.ReportMetric(float64(ts.Nanoseconds())/float64(cycles), "sequential_ns")
	b.ReportMetric(float64(ta)/float64(ts), "ratio")
	if all.Requests != nil {
		b.ReportMetric(float64(ra)/float64(cycles), "lockall_requests")
	}
	if seq.Requests != nil {
		b.ReportMetric(float64(rs)/float64(cycles), "sequential_requests")
	}
}

func release(b *testing.B, hs []*fence.Handle) {
	for _, h := range hs {
		if err := h.Release(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
