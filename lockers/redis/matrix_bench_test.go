package redis

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// The matrix compares acquire+release through fence with redsync's
// Mutex and with Redis's own floors, in every shape a harness may use:
// one key or 64 keys taken round-robin, a pool of one connection or
// go-redis's default pool (10 per GOMAXPROCS), fence's client opened
// from a redis:// URL or made with goredis.NewClient, the portable
// Locker or a Session. Every contender has a client of its own on the
// shared server.
//
// BenchmarkMatrix interleaves one cycle of each contender per iteration
// (the order rotating); BenchmarkMatrixBlocks runs each contender
// alone for -matrix.block (1 s) at a time, in rotating order, for
// -matrix.reps repetitions, and reports median [min–max] of the
// per-repetition ratios in its log.

var (
	matrixBlock = flag.Duration("matrix.block", time.Second, "BenchmarkMatrixBlocks: length of one contender's block")
	matrixReps  = flag.Int("matrix.reps", 5, "BenchmarkMatrixBlocks: repetitions")
)

// matrixTTL is the expiry of every lock of the matrix, fence's and redsync's.
const matrixTTL = 10 * time.Second

// shape is how a harness drives the contenders.
type shape struct {
	keys     int // taken round-robin
	pool     int // connections per client; 0 is go-redis's default
	parallel int // goroutines, each on keys/parallel keys of its own; 0 is one
}

func (s shape) String() string {
	p := "default"
	if s.pool > 0 {
		p = fmt.Sprint(s.pool)
	}
	n := fmt.Sprintf("keys=%d/pool=%s", s.keys, p)
	if s.parallel > 0 {
		n += fmt.Sprintf("/parallel=%d", s.parallel)
	}
	return n
}

// contender is one way to take and free a lock: cycle takes and frees
// key number i.
type contender struct {
	name  string
	cycle func(ctx context.Context, i int) error
	rt    *roundTrips
}

// matrixClient is a go-redis client of the shared server with the pool
// of s, whose round trips rt counts.
func matrixClient(b *testing.B, server string, s shape, rt *roundTrips) *goredis.Client {
	o, err := goredis.ParseURL(server)
	if err != nil {
		b.Fatal(err)
	}
	o.PoolSize = s.pool
	c := goredis.NewClient(o)
	b.Cleanup(func() { _ = c.Close() })
	c.AddHook(rt)
	return c
}

// matrixURLLocker opens a Locker from a redis:// URL, as a user does,
// with the pool of s, and counts its round trips in rt.
func matrixURLLocker(b *testing.B, server string, s shape, rt *roundTrips) *fence.Locker {
	u, err := url.Parse(server)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("prefix", uniquePrefix("matrix"))
	if s.pool > 0 {
		q.Set("pool_size", fmt.Sprint(s.pool))
	}
	u.RawQuery = q.Encode()
	l, err := fence.OpenLocker(b.Context(), u.String(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Close() })
	var c goredis.UniversalClient
	if !l.As(&c) {
		b.Fatal("the Locker gives no client")
	}
	c.AddHook(rt)
	return l
}

func keyNames(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	return keys
}

// contenders returns every contender of the matrix for shape s.
func contenders(b *testing.B, server string, s shape) []contender {
	keys := keyNames(s.keys)
	key := func(i int) string { return keys[i%len(keys)] }
	lockerCycle := func(l *fence.Locker) func(ctx context.Context, i int) error {
		return func(ctx context.Context, i int) error {
			lease, err := l.Acquire(ctx, key(i), matrixTTL, nil)
			if err != nil {
				return err
			}
			return l.Release(ctx, lease)
		}
	}
	var cs []contender

	rt := new(roundTrips)
	cs = append(cs, contender{"fence-url", lockerCycle(matrixURLLocker(b, server, s, rt)), rt})

	rt = new(roundTrips)
	cs = append(cs, contender{"fence-client", lockerCycle(newLocker(b, matrixClient(b, server, s, rt), nil)), rt})

	rt = new(roundTrips)
	sess, err := fence.NewSession(matrixURLLocker(b, server, s, rt), &fence.SessionOptions{TTL: matrixTTL})
	if err != nil {
		b.Fatal(err)
	}
	cs = append(cs, contender{"fence-session", func(ctx context.Context, i int) error {
		h, err := sess.Lock(ctx, key(i), nil)
		if err != nil {
			return err
		}
		return h.Release(ctx)
	}, rt})

	rt = new(roundTrips)
	rs := redsync.New(redsyncgoredis.NewPool(matrixClient(b, server, s, rt)))
	prefix := uniquePrefix("redsync")
	mutexes := make([]*redsync.Mutex, len(keys))
	for i, k := range keys {
		mutexes[i] = rs.NewMutex(prefix+k, redsync.WithExpiry(matrixTTL), redsync.WithTries(1))
	}
	cs = append(cs, contender{"redsync", func(ctx context.Context, i int) error {
		m := mutexes[i%len(mutexes)]
		if err := m.TryLockContext(ctx); err != nil {
			return err
		}
		ok, err := m.UnlockContext(ctx)
		if err == nil && !ok {
			err = fmt.Errorf("redsync: Unlock did not unlock")
		}
		return err
	}, rt})

	// The floor of a lock without a token: SET NX PX and DEL.
	rt = new(roundTrips)
	fc := matrixClient(b, server, s, rt)
	fprefix := uniquePrefix("floor")
	cs = append(cs, contender{"floor-setnx", func(ctx context.Context, i int) error {
		k := fprefix + key(i)
		ok, err := fc.SetNX(ctx, k, "owner", matrixTTL).Result()
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("floor: %s is held", k)
		}
		return fc.Del(ctx, k).Err()
	}, rt})

	// The floor of a lock with a token: the least script that takes the
	// key and increments its counter, and a compare-and-delete script.
	rt = new(roundTrips)
	tc := matrixClient(b, server, s, rt)
	tprefix := uniquePrefix("tokenfloor")
	cs = append(cs, contender{"floor-token", func(ctx context.Context, i int) error {
		k := key(i)
		ks := []string{tprefix + "{" + k + "}:lock", tprefix + "{" + k + "}:token"}
		owner := fence.NewOwnerID()
		t, err := floorAcquire.Run(ctx, tc, ks, owner, matrixTTL.Milliseconds()).Int64()
		if err != nil {
			return err
		}
		if t == 0 {
			return fmt.Errorf("token floor: %s is held", k)
		}
		n, err := floorRelease.Run(ctx, tc, ks[:1], fmt.Sprint(t)+":"+owner).Int64()
		if err == nil && n != 1 {
			err = fmt.Errorf("token floor: %s was not released", k)
		}
		return err
	}, rt})
	return cs
}

var (
	floorAcquire = goredis.NewScript(`
local t = redis.call('INCR', KEYS[2])
if not redis.call('SET', KEYS[1], t .. ':' .. ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
return t
`)
	floorRelease = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)
)

var matrixShapes = []shape{{keys: 1, pool: 1}, {keys: 1}, {keys: 64, pool: 1}, {keys: 64}}

// warm runs every contender over every key twice: connections dialled,
// scripts cached, counters created.
func warm(b *testing.B, s shape, cs []contender) {
	for _, c := range cs {
		for i := range 2 * s.keys {
			if err := c.cycle(b.Context(), i); err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
		}
		c.rt.n.Store(0)
	}
}

// BenchmarkMatrix runs one cycle of every contender per iteration, in
// rotating order, and reports each one's time per cycle, its ratio to
// redsync's (total time over total time), and its round trips. It runs
// no concurrent shape: with many goroutines at once every contender's
// cycle waits in the same queue and the ratios tend to 1 whatever each
// one costs (SET NX + DEL measured as redsync), so concurrent shapes are
// compared by the CPU time per cycle of BenchmarkMatrixBlocks and
// BenchmarkMatrixServer instead.
func BenchmarkMatrix(b *testing.B) {
	for _, s := range matrixShapes {
		b.Run(s.String(), func(b *testing.B) {
			cs := contenders(b, testenv.RedisURL(b), s)
			warm(b, s, cs)
			ctx := b.Context()
			total := make([]time.Duration, len(cs))
			n := 0
			for i := 0; b.Loop(); i++ {
				for j := range cs {
					c := (i + j) % len(cs)
					start := time.Now()
					if err := cs[c].cycle(ctx, i); err != nil {
						b.Fatalf("%s: %v", cs[c].name, err)
					}
					total[c] += time.Since(start)
				}
				n++
			}
			ref := total[slices.IndexFunc(cs, func(c contender) bool { return c.name == "redsync" })]
			for j, c := range cs {
				b.ReportMetric(float64(total[j].Microseconds())/float64(n), c.name+"-µs")
				if c.name != "redsync" {
					b.ReportMetric(float64(total[j])/float64(ref), c.name+"/redsync")
				}
				b.ReportMetric(float64(c.rt.n.Load())/float64(n), c.name+"-rt")
			}
		})
	}
}

// BenchmarkMatrixBlocks runs each contender alone for one block at a
// time (-matrix.block), in rotating order, -matrix.reps times, and logs
// per contender the median [min–max] of its cycle time and of its ratio
// to redsync over the repetitions (each ratio from one repetition's
// blocks). Run it with -benchtime 1x.
func BenchmarkMatrixBlocks(b *testing.B) {
	shapes := append(slices.Clone(matrixShapes), shape{keys: 64, parallel: 64})
	for _, s := range shapes {
		b.Run(s.String(), func(b *testing.B) {
			cs := contenders(b, testenv.RedisURL(b), s)
			warm(b, s, cs)
			for b.Loop() {
				per := make([][]float64, len(cs))  // µs per cycle, per repetition
				cpu := make([][]float64, len(cs))  // client CPU µs per cycle
				p50s := make([][]float64, len(cs)) // median cycle, µs
				rts := make([]float64, len(cs))
				for rep := range *matrixReps {
					for j := range cs {
						c := (rep + j) % len(cs)
						before, cpu0 := cs[c].rt.n.Load(), cpuTime()
						n, d, p50 := block(b, s, cs[c], *matrixBlock)
						per[c] = append(per[c], float64(d.Microseconds())/float64(n))
						p50s[c] = append(p50s[c], float64(p50.Microseconds()))
						cpu[c] = append(cpu[c], float64((cpuTime()-cpu0).Microseconds())/float64(n))
						rts[c] = float64(cs[c].rt.n.Load()-before) / float64(n)
					}
				}
				ref := per[slices.IndexFunc(cs, func(c contender) bool { return c.name == "redsync" })]
				var sb strings.Builder
				fmt.Fprintf(&sb, "\n| %s | µs per cycle | / redsync | median cycle µs | client CPU µs per cycle | round trips |\n|---|---|---|---|---|---|\n", s)
				for j, c := range cs {
					ratios := make([]float64, len(per[j]))
					for r := range ratios {
						ratios[r] = per[j][r] / ref[r]
					}
					fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %.2f |\n", c.name, spread(per[j], "%.0f"), spread(ratios, "%.2f"), spread(p50s[j], "%.0f"), spread(cpu[j], "%.0f"), rts[j])
					b.ReportMetric(median(per[j]), c.name+"-µs")
					if c.name != "redsync" {
						b.ReportMetric(median(ratios), c.name+"/redsync")
					}
				}
				b.Log(sb.String())
			}
		})
	}
}

// block runs c for d, in s.parallel goroutines when set, and returns the
// cycles done, the wall time multiplied by the goroutines (divided by
// the cycles, a time per cycle that is lower for a higher throughput in
// every shape), and the median time of one cycle of the first goroutine.
func block(b *testing.B, s shape, c contender, d time.Duration) (int, time.Duration, time.Duration) {
	ctx := b.Context()
	g := max(s.parallel, 1)
	counts := make([]int, g)
	var first []time.Duration // the cycles of goroutine 0
	errs := make([]error, g)
	start := time.Now()
	stop := start.Add(d)
	done := make(chan struct{})
	for w := range g {
		go func() {
			defer func() { done <- struct{}{} }()
			per := s.keys / g
			for i := 0; ; i++ {
				if i%8 == 0 && time.Now().After(stop) {
					return
				}
				k := i%per*g + w // keys w, w+g, w+2g...: the goroutine's own
				t0 := time.Now()
				if err := c.cycle(ctx, k); err != nil {
					errs[w] = err
					return
				}
				if w == 0 {
					first = append(first, time.Since(t0))
				}
				counts[w]++
			}
		}()
	}
	for range g {
		<-done
	}
	took := time.Since(start)
	n := 0
	for w := range g {
		if errs[w] != nil {
			b.Fatalf("%s: %v", c.name, errs[w])
		}
		n += counts[w]
	}
	slices.Sort(first)
	return n, took * time.Duration(g), first[len(first)/2]
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// spread formats v as median [min–max].
func spread(v []float64, f string) string {
	return fmt.Sprintf(f+" ["+f+"–"+f+"]", median(v), slices.Min(v), slices.Max(v))
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkMatrixServer runs each contender of the matrix alone on a
// redis-server of its own, 2,000 cycles at a time in rotating order,
// -matrix.reps times, and logs per contender what the server spent per
// cycle: the commands it ran (scripts' included), the time inside
// scripts (INFO commandstats: EVALSHA and EVAL, with the commands they
// call), the server's CPU time (INFO cpu) and the client's (the
// process's), and the sum of both against redsync's: the cost per cycle
// where CPU is the bottleneck (many callers on one instance). Each is
// median [min–max] over the repetitions. Run it with -benchtime 1x.
func BenchmarkMatrixServer(b *testing.B) {
	srv := startServer(b, "redis-matrix")
	server := "redis://" + srv.addr() + "/0"
	s := shape{keys: 64, pool: 1}
	cs := contenders(b, server, s)
	warm(b, s, cs)
	const cycles = 2000
	ctx := b.Context()
	for b.Loop() {
		script := make([][]float64, len(cs))
		cpu := make([][]float64, len(cs))
		client := make([][]float64, len(cs))
		names := make([]string, len(cs))
		for rep := range *matrixReps {
			for j := range cs {
				c := (rep + j) % len(cs)
				if err := srv.c.ConfigResetStat(ctx).Err(); err != nil {
					b.Fatal(err)
				}
				cpu0, client0 := serverCPU(b, srv.c), cpuTime()
				for i := range cycles {
					if err := cs[c].cycle(ctx, i); err != nil {
						b.Fatal(err)
					}
				}
				clientUsed := cpuTime() - client0
				used := serverCPU(b, srv.c) - cpu0
				var us int64
				names[c], us = commandStats(b, srv.c)
				script[c] = append(script[c], float64(us)/cycles)
				cpu[c] = append(cpu[c], float64(used.Microseconds())/cycles)
				client[c] = append(client[c], float64(clientUsed.Microseconds())/cycles)
			}
		}
		ref := slices.IndexFunc(cs, func(c contender) bool { return c.name == "redsync" })
		var sb strings.Builder
		sb.WriteString("\n| contender | server time in scripts, µs per cycle | server CPU, µs per cycle | client CPU, µs per cycle | server + client CPU / redsync's | commands per 2,000 cycles |\n|---|---|---|---|---|---|\n")
		for j, c := range cs {
			ratios := make([]float64, len(cpu[j]))
			for r := range ratios {
				ratios[r] = (cpu[j][r] + client[j][r]) / (cpu[ref][r] + client[ref][r])
			}
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s |\n", c.name, spread(script[j], "%.1f"), spread(cpu[j], "%.1f"), spread(client[j], "%.1f"), spread(ratios, "%.2f"), names[j])
			b.ReportMetric(median(script[j]), c.name+"-script-µs")
		}
		b.Log(sb.String())
	}
}

// serverCPU reads the CPU time the server has used (INFO cpu: user and
// system, its main thread and the others).
func serverCPU(b *testing.B, c *goredis.Client) time.Duration {
	info, err := c.Info(b.Context(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var t float64
	for line := range strings.SplitSeq(info, "\r\n") {
		k, v, _ := strings.Cut(line, ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			f, _ := strconv.ParseFloat(v, 64)
			t += f
		}
	}
	return time.Duration(t * float64(time.Second))
}

// commandStats reads INFO commandstats: the commands by name with their
// calls (those scripts call included), and the time spent in scripts
// (EVALSHA and EVAL, the commands they call included).
func commandStats(b *testing.B, c *goredis.Client) (names string, scripts int64) {
	info, err := c.Info(b.Context(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var parts []string
	for line := range strings.SplitSeq(info, "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") || name == "info" || name == "config|resetstat" || name == "config" {
			continue
		}
		var n, u int64
		for f := range strings.SplitSeq(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "calls":
				n, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				u, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		if name == "evalsha" || name == "eval" {
			scripts += u
		}
		parts = append(parts, fmt.Sprintf("%s=%d", name, n))
	}
	return strings.Join(parts, " "), scripts
}
