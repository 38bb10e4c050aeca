package redis

import (
	"context"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence/internal/testing/testenv"
)

// roundTrips is a go-redis hook that counts what a client sends: each
// command, and each pipeline as one (go-redis sends a pipeline in one
// write and reads its answers together), except the set-up of a new
// connection (HELLO, then CLIENT SETINFO in a pipeline). Hooks run
// around go-redis's retries, so the count is exact only while nothing
// fails.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (r *roundTrips) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmd.Name() != "hello" {
			r.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		if !slices.ContainsFunc(cmds, func(c goredis.Cmder) bool { return c.Name() != "client" }) {
			return next(ctx, cmds) // a new connection's set-up
		}
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

var _ goredis.Hook = (*roundTrips)(nil)

// countedClient is a client of the shared server with a pool of one
// connection, whose round trips rt counts.
func countedClient(b *testing.B, rt *roundTrips) *goredis.Client {
	o, err := goredis.ParseURL(testenv.RedisURL(b))
	if err != nil {
		b.Fatal(err)
	}
	o.PoolSize = 1
	c := goredis.NewClient(o)
	b.Cleanup(func() { _ = c.Close() })
	c.AddHook(rt)
	return c
}

// BenchmarkAcquireRelease compares an acquire+release of one key through
// this package's Locker (the portable layer over the scripts) with a
// TryLock+Unlock of redsync's Mutex (single instance, its go-redis v9
// pool), on the same server, each with a client of its own. Each iteration
// runs one cycle of each, in alternating order, timing both, which takes
// the machine's drift out of the comparison. fence/redsync is fence's
// total time over redsync's, the figure to compare with other
// harnesses; median-pair-ratio is the median over the iterations of
// fence / redsync, which on a loaded machine differs from it by up to
// 0.1 either way. rt/cycle counts what each client sent per cycle
// (commands, a pipeline as one): one round trip each.
func BenchmarkAcquireRelease(b *testing.B) {
	var fenceRT, redsyncRT roundTrips
	l := newLocker(b, countedClient(b, &fenceRT), nil)
	rs := redsync.New(redsyncgoredis.NewPool(countedClient(b, &redsyncRT)))
	mutex := rs.NewMutex(uniquePrefix("redsync")+"k", redsync.WithExpiry(time.Minute), redsync.WithTries(1))
	ctx := b.Context()
	const key = "k"
	fenceCycle := func() {
		lease, err := l.Acquire(ctx, key, time.Minute, nil)
		if err == nil {
			err = l.Release(ctx, lease)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	redsyncCycle := func() {
		err := mutex.TryLockContext(ctx)
		if err == nil {
			var ok bool
			if ok, err = mutex.UnlockContext(ctx); err == nil && !ok {
				b.Fatal("redsync: Unlock did not unlock")
			}
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	// Warm up: connections dialled, scripts cached on the server.
	for range 10 {
		fenceCycle()
		redsyncCycle()
	}
	fenceRT.n.Store(0)
	redsyncRT.n.Store(0)
	var fenceTime, redsyncTime time.Duration
	var ratios []float64
	for i := 0; b.Loop(); i++ {
		var f, r time.Duration
		if i%2 == 0 {
			f, r = timed(fenceCycle), timed(redsyncCycle)
		} else {
			r, f = timed(redsyncCycle), timed(fenceCycle)
		}
		fenceTime += f
		redsyncTime += r
		ratios = append(ratios, float64(f)/float64(r))
	}
	slices.Sort(ratios)
	n := float64(len(ratios))
	b.ReportMetric(float64(fenceTime)/float64(redsyncTime), "fence/redsync")
	b.ReportMetric(ratios[len(ratios)/2], "median-pair-ratio")
	b.ReportMetric(float64(fenceTime.Microseconds())/n, "fence-µs/cycle")
	b.ReportMetric(float64(redsyncTime.Microseconds())/n, "redsync-µs/cycle")
	b.ReportMetric(float64(fenceRT.n.Load())/n, "fence-rt/cycle")
	b.ReportMetric(float64(redsyncRT.n.Load())/n, "redsync-rt/cycle")
}

func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// TestRoundTrips counts, on the socket, the writes that start a round
// trip (a write after the server has answered) for one acquire+release,
// once the scripts are cached: two, the same as redsync's SET NX and
// delete script. The hook count of BenchmarkAcquireRelease sees commands;
// this sees the wire.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		cycle func(t *testing.T, c *goredis.Client) func()
	}{
		{"fence", func(t *testing.T, c *goredis.Client) func() {
			l := newLocker(t, c, nil)
			return func() {
				lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
				if err == nil {
					err = l.Release(t.Context(), lease)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"redsync", func(t *testing.T, c *goredis.Client) func() {
			m := redsync.New(redsyncgoredis.NewPool(c)).NewMutex(uniquePrefix("redsync")+"k", redsync.WithExpiry(time.Minute), redsync.WithTries(1))
			return func() {
				if err := m.TryLockContext(t.Context()); err != nil {
					t.Fatal(err)
				}
				if ok, err := m.UnlockContext(t.Context()); err != nil || !ok {
					t.Fatalf("Unlock: %v, %v", ok, err)
				}
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var w wire
			o, err := goredis.ParseURL(testenv.RedisURL(t))
			if err != nil {
				t.Fatal(err)
			}
			o.PoolSize = 1
			o.Dialer = w.dial
			c := goredis.NewClient(o)
			t.Cleanup(func() { _ = c.Close() })
			cycle := tt.cycle(t, c)
			cycle() // dial, and cache the scripts
			before := w.n.Load()
			const cycles = 20
			for range cycles {
				cycle()
			}
			got := float64(w.n.Load()-before) / cycles
			t.Logf("%s: %.1f round trips per acquire+release", tt.name, got)
			if got != 2 {
				t.Errorf("%s: %.2f round trips per acquire+release; want 2", tt.name, got)
			}
		})
	}
}

// wire counts round trips on the connections it dials: a write that
// follows a read which returned data starts a new one.
type wire struct {
	n       atomic.Int64
	writing atomic.Bool
}

func (w *wire) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: c, w: w}, nil
}

type wireConn struct {
	net.Conn
	w *wire
}

func (c *wireConn) Write(b []byte) (int, error) {
	if !c.w.writing.Swap(true) {
		c.w.n.Add(1)
	}
	return c.Conn.Write(b)
}

func (c *wireConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.w.writing.Store(false)
	}
	return n, err
}
