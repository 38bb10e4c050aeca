package redis

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
)

// TestRenewBatch: RenewBatch renews every lease still held and answers
// fence.ErrNotHeld for one released, in one request, on a server that
// has not cached the renew script yet (its leases are sent again with
// EVAL) and then on one that has.
func TestRenewBatch(t *testing.T) {
	t.Parallel()
	s := startServer(t, "redis-batch")
	c := s.client(t) // to look at the records
	var rt roundTrips
	counted := goredis.NewClient(&goredis.Options{Addr: s.addr()})
	t.Cleanup(func() { _ = counted.Close() })
	counted.AddHook(&rt)
	l, d := newStoreLocker(t, counted, nil)
	ctx := t.Context()
	const ttl = time.Minute
	var leases []fence.Lease
	for i := range 5 {
		lease, err := l.Acquire(ctx, fmt.Sprint("k", i), ttl, nil)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, lease)
	}
	if err := l.Release(ctx, leases[2]); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k0", "k4"} { // shorten, to see the renewal
		must(t, c.PExpire(ctx, d.lockKey(k), 10*time.Second).Err())
	}
	must(t, c.ScriptFlush(ctx).Err())
	for _, pass := range []string{"uncached", "cached"} {
		before := rt.n.Load()
		errs := d.RenewBatch(ctx, leases)
		if len(errs) != len(leases) {
			t.Fatalf("%s: %d answers for %d leases", pass, len(errs), len(leases))
		}
		for i, err := range errs {
			if i == 2 {
				if !errors.Is(err, fence.ErrNotHeld) {
					t.Errorf("%s: released lease: %v; want ErrNotHeld", pass, err)
				}
			} else if err != nil {
				t.Errorf("%s: lease %d: %v", pass, i, err)
			}
		}
		for _, k := range []string{"k0", "k4"} {
			if pttl := c.PTTL(ctx, d.lockKey(k)).Val(); pttl < 30*time.Second {
				t.Errorf("%s: %s expires in %v; want it renewed to %v", pass, k, pttl, ttl)
			}
		}
		want := int64(1) // one pipeline
		if pass == "uncached" {
			want = 2 // and the second, with EVAL
		}
		if got := rt.n.Load() - before; got != want {
			t.Errorf("%s: %d requests; want %d", pass, got, want)
		}
		for _, k := range []string{"k0", "k4"} {
			must(t, c.PExpire(ctx, d.lockKey(k), 10*time.Second).Err())
		}
	}
}

// TestSessionRenewalRequests: a Session's renewal round over this
// locker sends one request, for 1, 100 and 1,000 handles alike; and the
// server runs one renew script per handle.
func TestSessionRenewalRequests(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 100, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			var rt roundTrips
			c := newClient(t)
			c.AddHook(&rt)
			clock := clocktest.New(time.Now())
			l := newLocker(t, c, &Options{Clock: clock})
			var renewed, failed atomic.Int64
			l.SetObserver(&fence.Observer{Renewed: func(e fence.RenewedEvent) {
				if e.Err != nil {
					failed.Add(1)
				}
				renewed.Add(1)
			}})
			const ttl = time.Minute
			s, err := fence.NewSession(l, &fence.SessionOptions{TTL: ttl, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close(t.Context()) })
			if err := renewScript.Load(ctx, c).Err(); err != nil { // cached: one request from the first round
				t.Fatal(err)
			}
			for i := range n {
				if _, err := s.Lock(ctx, fmt.Sprint("k", i), nil); err != nil {
					t.Fatal(err)
				}
			}
			for round := int64(1); round <= 3; round++ {
				// Idle: the renewal timer and the safety deadline armed.
				if err := clock.WaitTimers(ctx, 2); err != nil {
					t.Fatal(err)
				}
				before := rt.n.Load()
				clock.Advance(ttl / 3)
				for renewed.Load() < round*int64(n) {
					if ctx.Err() != nil {
						t.Fatal(ctx.Err())
					}
					time.Sleep(time.Millisecond)
				}
				if got := rt.n.Load() - before; got != 1 {
					t.Errorf("round %d of %d handles: %d requests; want 1", round, n, got)
				}
			}
			if f := failed.Load(); f != 0 {
				t.Errorf("%d renewals failed", f)
			}
		})
	}
}

var renewEach = flag.Bool("renew.each", false, "BenchmarkRenewRound: one Renew per lease instead of RenewBatch")

// BenchmarkRenewRound renews n leases per round with RenewBatch, as a
// Session's keepalive does, for 1, 100, 1,000 and 10,000 leases: the
// time per round and per lease, the client's CPU per lease, and the
// requests per round. With -renew.each, a round is one Renew per lease
// instead, for comparison.
func BenchmarkRenewRound(b *testing.B) {
	for _, n := range []int{1, 100, 1000, 10000} {
		b.Run(fmt.Sprint("leases=", n), func(b *testing.B) {
			ctx := b.Context()
			var rt roundTrips
			c := newClient(b)
			c.AddHook(&rt)
			l, d := newStoreLocker(b, c, nil)
			leases := make([]fence.Lease, n)
			for i := range leases {
				lease, err := l.Acquire(ctx, fmt.Sprint("k", i), time.Minute, nil)
				if err != nil {
					b.Fatal(err)
				}
				leases[i] = lease
			}
			if err := renewScript.Load(ctx, c).Err(); err != nil {
				b.Fatal(err)
			}
			rt.n.Store(0)
			cpu0, rounds := cpuTime(), 0
			for b.Loop() {
				if !*renewEach {
					for i, err := range d.RenewBatch(ctx, leases) {
						if err != nil {
							b.Fatalf("lease %d: %v", i, err)
						}
					}
				} else {
					for _, lease := range leases {
						if err := d.Renew(ctx, lease); err != nil {
							b.Fatal(err)
						}
					}
				}
				rounds++
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(rt.n.Load())/float64(rounds), "requests/round")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(rounds*n), "µs/lease")
			b.ReportMetric(float64(cpu.Microseconds())/float64(rounds*n), "client-cpu-µs/lease")
		})
	}
}

// TestRenewBatchWait: with MinReplicas 1, RenewBatch ends its pipeline
// with one WAIT (still one request) and renews every lease while the
// replica acknowledges; with the replica paused and cut off, every lease
// still held gets a *ReplicationError with no acknowledgement.
func TestRenewBatchWait(t *testing.T) {
	t.Parallel()
	primary := startServer(t, "primary", "--repl-diskless-sync-delay", "0")
	replica := startServer(t, "replica", "--replicaof", "127.0.0.1", strconv.Itoa(primary.port))
	ctx := t.Context()
	if n, err := primary.c.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d replicas, %v", n, err)
	}
	var rt roundTrips
	c := goredis.NewClient(&goredis.Options{Addr: primary.addr()})
	t.Cleanup(func() { _ = c.Close() })
	c.AddHook(&rt)
	l, d := newStoreLocker(t, c, &Options{MinReplicas: 1, WaitTimeout: 2 * time.Second}) // a loaded machine is slow to acknowledge
	var leases []fence.Lease
	for i := range 3 {
		lease, err := l.Acquire(ctx, fmt.Sprint("k", i), time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, lease)
	}
	if err := renewScript.Load(ctx, c).Err(); err != nil {
		t.Fatal(err)
	}
	before := rt.n.Load()
	for i, err := range d.RenewBatch(ctx, leases) {
		if err != nil {
			t.Errorf("lease %d with the replica up: %v", i, err)
		}
	}
	if got := rt.n.Load() - before; got != 1 {
		t.Errorf("%d requests; want 1 (the scripts and WAIT in one pipeline)", got)
	}
	replica.Pause()
	t.Cleanup(replica.Resume)
	if err := primary.c.ClientKillByFilter(ctx, "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	for i, err := range d.RenewBatch(ctx, leases) {
		if re, ok := errors.AsType[*ReplicationError](err); !ok || re.Acked != 0 || re.Op != "renew" || re.Token != leases[i].Token {
			t.Errorf("lease %d with the replica cut off: %v; want a *ReplicationError of renew with 0 acknowledgements", i, err)
		}
	}
}

// BenchmarkSessionRenewal holds n handles in one fence.Session with a 3 s
// TTL (a renewal round every second) for -renewal.hold of real time, and
// reports the requests per round, the client's CPU per second of
// holding, and the handles lost. Run it with -benchtime 1x.
func BenchmarkSessionRenewal(b *testing.B) {
	for _, n := range []int{1, 100, 1000, 10000} {
		b.Run(fmt.Sprint("leases=", n), func(b *testing.B) {
			ctx := b.Context()
			var rt roundTrips
			c := newClient(b)
			c.AddHook(&rt)
			l := newLocker(b, c, nil)
			var renewed, lost atomic.Int64
			l.SetObserver(&fence.Observer{
				Renewed:   func(fence.RenewedEvent) { renewed.Add(1) },
				LeaseLost: func(fence.LeaseLostEvent) { lost.Add(1) },
			})
			const ttl = 3 * time.Second
			for b.Loop() {
				s, err := fence.NewSession(l, &fence.SessionOptions{TTL: ttl})
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					if _, err := s.Lock(ctx, fmt.Sprint("k", i), nil); err != nil {
						b.Fatal(err)
					}
				}
				renewed.Store(0)
				lost.Store(0)
				rt.n.Store(0)
				cpu0 := cpuTime()
				time.Sleep(*renewalHold)
				cpu := cpuTime() - cpu0
				requests, renewals := rt.n.Load(), renewed.Load()
				if err := s.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
				rounds := float64(renewals) / float64(n)
				b.ReportMetric(float64(requests)/rounds, "requests/round")
				b.ReportMetric(rounds, "rounds")
				b.ReportMetric(float64(cpu.Microseconds())/renewalHold.Seconds()/1000, "client-cpu-ms/s")
				b.ReportMetric(float64(lost.Load()), "lost")
			}
		})
	}
}

var renewalHold = flag.Duration("renewal.hold", 5*time.Second, "BenchmarkSessionRenewal: how long the handles are held")
