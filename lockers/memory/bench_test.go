package memory

import (
	"context"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
)

// BenchmarkAcquireRelease measures one acquire and one release of a free
// key, through the portable layer and on the bare driver side by side, so
// the ratio of the two is the cost of the layer. The owner is fixed, so
// that generating owner ids does not hide it; owner=new adds that.
func BenchmarkAcquireRelease(b *testing.B) {
	ctx := context.Background()
	opts := &fence.AcquireOptions{Owner: "bench"}
	b.Run("portable", func(b *testing.B) {
		l := New(nil)
		b.ReportAllocs()
		for b.Loop() {
			lease, err := l.Acquire(ctx, "k", time.Minute, opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("driver", func(b *testing.B) {
		s := &store{clock: fence.SystemClock{}, keys: make(map[string]*record)}
		b.ReportAllocs()
		for b.Loop() {
			lease, err := s.Acquire(ctx, "k", "bench", time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("handle", func(b *testing.B) {
		s, err := fence.NewSession(New(nil), &fence.SessionOptions{TTL: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		handleCycles(b, s)
	})
	b.Run("handle/held=1", func(b *testing.B) {
		// A session that holds another lease all along: its keepalive
		// runs already, as in a busy process.
		s, err := fence.NewSession(New(nil), &fence.SessionOptions{TTL: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Lock(ctx, "other", nil); err != nil {
			b.Fatal(err)
		}
		defer s.Close(ctx)
		handleCycles(b, s)
	})
	b.Run("portable/owner=new", func(b *testing.B) {
		l := New(nil)
		b.ReportAllocs()
		for b.Loop() {
			lease, err := l.Acquire(ctx, "k", time.Minute, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// handleCycles takes and releases one handle through s per iteration.
func handleCycles(b *testing.B, s *fence.Session) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h, err := s.Lock(ctx, "k", nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInProcess measures the in-process path against the bare
// driver call, interleaved so that the load of a shared machine weighs on
// every figure alike: each iteration runs a block of cycles of each kind
// in turn (the driver's Acquire and Release called directly; the
// portable Locker's; a handle of a Session, try-once, released; and
// guard.Run with a function that returns at once), and the benchmark
// reports the time per cycle of each kind, its ratio to the driver's and
// its allocations. It reports the CPU time of the process per cycle of
// each kind the same way (where the system says it): on a machine shared
// with other work, CPU time is the steadier measure. ns/op is the time
// of one iteration, all four blocks.
func BenchmarkInProcess(b *testing.B) {
	const block = 256
	ctx := context.Background()
	s := &store{clock: fence.SystemClock{}, keys: make(map[string]*record)}
	l := New(nil)
	sess, err := fence.NewSession(New(nil), &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	gsess, err := fence.NewSession(New(nil), &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	opts := &fence.AcquireOptions{Owner: "bench"}
	fn := func(context.Context, *fence.Handle) error { return nil }
	kinds := []struct {
		name  string
		cycle func()
	}{
		{"driver", func() {
			lease, err := s.Acquire(ctx, "k", "bench", time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}},
		{"portable", func() {
			lease, err := l.Acquire(ctx, "k", time.Minute, opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}},
		{"handle", func() {
			h, err := sess.Lock(ctx, "k", nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}},
		{"guard", func() {
			if err := guard.Run(ctx, gsess, "k", fn, nil); err != nil {
				b.Fatal(err)
			}
		}},
	}
	spent := make([]time.Duration, len(kinds))
	cpu := make([]time.Duration, len(kinds))
	cycles := 0
	for b.Loop() {
		for i, k := range kinds {
			start, startCPU := time.Now(), cpuTime()
			for range block {
				k.cycle()
			}
			spent[i] += time.Since(start)
			cpu[i] += cpuTime() - startCPU
		}
		cycles += block
	}
	b.StopTimer()
	floor := float64(spent[0]) / float64(cycles)
	cpuFloor := float64(cpu[0]) / float64(cycles)
	for i, k := range kinds {
		ns := float64(spent[i]) / float64(cycles)
		cpuNs := float64(cpu[i]) / float64(cycles)
		b.ReportMetric(ns, k.name+"-ns/cycle")
		b.ReportMetric(testing.AllocsPerRun(block, k.cycle), k.name+"-allocs/cycle")
		if cpuFloor > 0 {
			b.ReportMetric(cpuNs, k.name+"-cpu-ns/cycle")
		}
		if i > 0 {
			b.ReportMetric(ns/floor, k.name+"/driver")
			if cpuFloor > 0 {
				b.ReportMetric(cpuNs/cpuFloor, k.name+"/driver-cpu")
			}
		}
	}
}
