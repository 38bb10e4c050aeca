package redlock

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
)

// commands counts the commands a client sends: with one command per
// master per round, commands per master is the rounds of network waits.
type commands struct{ n atomic.Int64 }

func (c *commands) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (c *commands) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commands) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

var _ goredis.Hook = (*commands)(nil)

// benchMasters starts three volatile masters and returns a counted client
// for each, shared by both lockers.
func benchMasters(b *testing.B) ([]*goredis.Client, *commands) {
	ms := startMasters(b, 3, volatile)
	count := new(commands)
	cs := make([]*goredis.Client, len(ms))
	for i, m := range ms {
		cs[i] = newClient(m.addr)
		cs[i].AddHook(count)
		b.Cleanup(func() { _ = cs[i].Close() })
	}
	return cs, count
}

// BenchmarkVsRedsync takes and frees distinct keys with this locker and
// with redsync's Redlock (NewMutex, TryLock, Unlock, with goredis v9
// pools) over the same three masters, one cycle of each per iteration in
// alternating order, each timed. It reports the median cycle of each,
// ratio (the median of this locker's cycle over redsync's, iteration by
// iteration: the machine's drift cancels out), and the rounds of network
// waits per cycle of each (commands sent per master per cycle). The
// median cycle of the bare store (no portable layer) is reported too,
// after the other two in each iteration, to tell the layer's cost from
// the scripts'.
func BenchmarkVsRedsync(b *testing.B) {
	cs, count := benchMasters(b)
	vsRedsyncOn(b, cs, count)
}

func vsRedsyncOn(b *testing.B, cs []*goredis.Client, count *commands) {
	masters := make([]Client, len(cs))
	pools := make([]rsredis.Pool, len(cs))
	for i, c := range cs {
		masters[i], pools[i] = c, rsgoredis.NewPool(c)
	}
	d, err := newStore(masters, nil)
	if err != nil {
		b.Fatal(err)
	}
	l, err := d.locker(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rs := redsync.New(pools...)
	ctx := b.Context()
	var fenceNs, rsNs, driverNs, ratios []float64
	var fenceCmds, rsCmds int64
	ours := func(i int) {
		before := count.n.Load()
		lease, err := l.Acquire(ctx, "fence-"+strconv.Itoa(i), time.Minute, nil)
		if err == nil {
			err = l.Release(ctx, lease)
		}
		if err != nil {
			b.Fatal(err)
		}
		fenceCmds += count.n.Load() - before
	}
	theirs := func(i int) {
		before := count.n.Load()
		m := rs.NewMutex("redsync-"+strconv.Itoa(i), redsync.WithExpiry(time.Minute), redsync.WithTries(1))
		if err := m.TryLockContext(ctx); err != nil {
			b.Fatal(err)
		}
		if ok, err := m.UnlockContext(ctx); !ok || err != nil {
			b.Fatal(ok, err)
		}
		rsCmds += count.n.Load() - before
	}
	bare := func(i int) { // the store alone, without the portable layer
		lease, err := d.Acquire(ctx, "driver-"+strconv.Itoa(i), fence.NewOwnerID(), time.Minute)
		if err == nil {
			err = d.Release(ctx, lease)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	timed := func(f func(int), i int) float64 {
		start := time.Now()
		f(i)
		return float64(time.Since(start).Nanoseconds())
	}
	ours(-1) // load the scripts on every master
	theirs(-1)
	fenceCmds, rsCmds = 0, 0
	n := 0
	for i := 0; b.Loop(); i++ {
		var f, r float64
		if i%2 == 0 {
			f, r = timed(ours, i), timed(theirs, i)
		} else {
			r, f = timed(theirs, i), timed(ours, i)
		}
		fenceNs, rsNs, ratios = append(fenceNs, f), append(rsNs, r), append(ratios, f/r)
		driverNs = append(driverNs, timed(bare, i))
		n++
	}
	b.ReportMetric(median(fenceNs), "fence-ns/cycle")
	b.ReportMetric(median(rsNs), "redsync-ns/cycle")
	b.ReportMetric(median(driverNs), "driver-ns/cycle")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(float64(fenceCmds)/float64(n*len(cs)), "fence-rounds/cycle")
	b.ReportMetric(float64(rsCmds)/float64(n*len(cs)), "redsync-rounds/cycle")
}

// BenchmarkReusedKey takes and frees one key again and again: with the
// clock's proposals (one round per Acquire, as for a fresh key) and with
// proposals that always start at 1 (every Acquire after the first is
// refused once and proposes the counters' highest + 1: two rounds). It
// reports the rounds per cycle; the ratio of the two is the cost of a
// second round.
func BenchmarkReusedKey(b *testing.B) {
	for _, c := range []struct {
		name  string
		still bool
	}{{"ClockProposals", false}, {"StillProposals", true}} {
		b.Run(c.name, func(b *testing.B) {
			cs, count := benchMasters(b)
			masters := make([]Client, len(cs))
			for i, cl := range cs {
				masters[i] = cl
			}
			d, err := newStore(masters, nil)
			if err != nil {
				b.Fatal(err)
			}
			if c.still {
				stillProposals(d)
			}
			l, err := d.locker(nil)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			ctx := b.Context()
			cycle := func() {
				lease, err := l.Acquire(ctx, "k", time.Minute, nil)
				if err == nil {
					err = l.Release(ctx, lease)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			cycle()
			before := count.n.Load()
			for b.Loop() {
				cycle()
			}
			b.ReportMetric(float64(count.n.Load()-before)/float64(b.N*len(cs)), "rounds/cycle")
		})
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
