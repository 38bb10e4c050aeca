package scale

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

var (
	sizesFlag = flag.String("scale.sizes", "1,100,1000,10000", "numbers of leases held in one Session")
	intervals = flag.Int("scale.intervals", 3, "renewal intervals measured")
	budget    = flag.Duration("scale.acquire-budget", 3*time.Minute, "longest time to acquire the leases of one size; a size that takes longer is skipped, with how far it got")
)

const (
	// interval is the renewal interval of every session measured.
	interval = time.Second
	// acquirers is how many Lock calls run at once while the benchmark
	// takes its leases: one on SQLite, which runs one writer at a time
	// (more only wait for its lock, and back off).
	acquirers = 32
)

// ttls returns the lease durations measured on a store: fence.DefaultTTL
// (30 s) everywhere, and also 3 s on etcd (its leases of whole seconds,
// close to its shortest).
func ttls(name string) []time.Duration {
	if name == "etcd" {
		return []time.Duration{fence.DefaultTTL, 3 * time.Second}
	}
	return []time.Duration{fence.DefaultTTL}
}

// tooBig says why a store is not measured at a size, or "": the
// emulators that take minutes to acquire or renew 10,000 leases here
// (figures of this benchmark at N = 1,000 on a 2-core machine).
func tooBig(store string, n int) string {
	if n < 10000 {
		return ""
	}
	switch store {
	case "azblob":
		return "Azurite takes about 20 acquisitions a second with 32 in flight (1,000 in 54 s, some timing out): 10,000 would take about 9 minutes"
	case "gcs-clock-free", "gcs-trusted-clock":
		return "fake-gcs-server renews about 300 leases a second (a round of 1,000 takes over 3 s): a round of 10,000 would outlast the 27 s safety deadline of a 30 s lease, from the emulator's speed alone (extrapolated, not measured)"
	case "s3-clock-free", "s3-trusted-clock":
		return "measured once on MinIO (2026-12-05): acquiring 10,000 leases took 75 s, a round of renewals 17 s, and 3,593 of 10,000 leases were lost; 1,000 leases: rounds of 2.1 s, none lost"
	case "dynamo-clock-free", "dynamo-trusted-clock":
		return "dynalite takes 4.5 to 9 s to acquire 1,000 leases and renews about 700 a second: 10,000 would take 2 to 3 minutes to acquire and 15 s a round"
	}
	return ""
}

var (
	wireOnce  sync.Once
	theWire   *wire
	wireError error
)

// BenchmarkRenewScale holds N leases in one fence.Session on every store
// of testlockers.Backends and measures its renewals over
// -scale.intervals renewal intervals of 1 s, after two to settle. Each
// figure "per interval" is per round of the keepalive (one round per
// interval when it keeps up): per N leases sent to be renewed, rounds
// being how many rounds' worth that was:
//
//   - wire-rt/interval: round trips on the wire to the store's servers
//     and emulators, counted by a TCP proxy in a child process (none for
//     memory and SQLite, which have no wire);
//   - calls/interval: driver calls, counted by a driver.Wrap wrapper
//     (renew-calls/interval: those that renew: one per Renew, one per
//     RenewBatch);
//   - cpu-ms/interval and cpu-us/lease: this process's CPU (getrusage:
//     user + system; on memory, the store's too);
//   - lost: leases lost from the first Lock to the end;
//   - acquire-s: the time to take the N leases, 32 Lock calls at once
//     (one at a time on SQLite);
//   - s/round: the time from one round to the next (the interval, plus
//     what a round takes).
//
// Run it with
//
//	go test -run '^$' -bench RenewScale -benchtime 1x -timeout 60m ./internal/testing/scale
//
// and -bench RenewScale/etcd (or RenewScale/etcd/ttl=3s) for one store.
// It prints a table of every sub-benchmark at the end.
func BenchmarkRenewScale(b *testing.B) {
	var sizes []int
	for _, s := range strings.Split(*sizesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			b.Fatalf("-scale.sizes: %q is not a number of leases", s)
		}
		sizes = append(sizes, n)
	}
	wireOnce.Do(func() { theWire, wireError = startWire() })
	if wireError != nil {
		b.Logf("no wire counts: %v", wireError)
	}
	for _, be := range testlockers.Backends {
		for _, ttl := range ttls(be.Name) {
			for _, n := range sizes {
				name := fmt.Sprintf("%s/ttl=%v/N=%d", be.Name, ttl, n)
				b.Run(name, func(b *testing.B) { measure(b, name, be, ttl, n) })
			}
		}
	}
}

func measure(b *testing.B, name string, be testlockers.Backend, ttl time.Duration, n int) {
	if why := tooBig(be.Name, n); why != "" {
		addRow(row{name: name, note: "skipped: " + why})
		b.Skip(why)
	}
	var c calls
	l, err := counted(be.Lockers(b, 1, nil)[0], &c)
	if err != nil {
		b.Fatal(err)
	}
	sess, err := fence.NewSession(l, &fence.SessionOptions{TTL: ttl, RenewInterval: interval})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_ = sess.Close(ctx)
	})

	// Take the N leases.
	hs := make([]*fence.Handle, n)
	ctx, cancel := context.WithTimeout(b.Context(), *budget)
	defer cancel()
	start := time.Now()
	var failed atomic.Int64
	var firstErr atomic.Value
	workers := acquirers
	if be.File {
		workers = 1
	}
	run(n, workers, func(i int) {
		// Wait: retry a Lock that failed on a slow emulator (a busy key
		// is never met: each key is new).
		h, err := sess.Lock(ctx, fmt.Sprintf("lease-%05d", i), &fence.LockOptions{Wait: *budget})
		if err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, err)
			return
		}
		hs[i] = h
	})
	acquire := time.Since(start)
	if f := failed.Load(); f > 0 {
		why := fmt.Sprintf("%d of %d Lock calls failed in %.0f s (first: %v)", f, n, acquire.Seconds(), firstErr.Load())
		addRow(row{name: name, note: "skipped: " + why})
		b.Skip(why)
	}

	// Let the rounds fall into step, then measure.
	time.Sleep(2 * interval)
	var w0 int64
	if theWire != nil {
		if w0, err = theWire.turns(); err != nil {
			b.Fatal(err)
		}
	}
	t0 := time.Now()
	cpu0, calls0, renewals0, leases0 := cpuTime(b), c.all(), c.renewals(), c.leases()
	time.Sleep(time.Duration(*intervals) * interval)
	cpu1, calls1, renewals1, leases1 := cpuTime(b), c.all(), c.renewals(), c.leases()
	window := time.Since(t0)
	var w1 int64
	if theWire != nil {
		if w1, err = theWire.turns(); err != nil {
			b.Fatal(err)
		}
	}
	lost := 0
	for _, h := range hs {
		if h.Err() != nil {
			lost++
		}
	}
	// Per round of the keepalive (one per interval when it keeps up):
	// per N leases sent to be renewed, so that a round cut by the
	// window counts for its part.
	k := float64(leases1-leases0) / float64(n)
	if k == 0 {
		b.Fatalf("no renewal round in %d intervals", *intervals)
	}
	r := row{
		name:     name,
		rounds:   k,
		period:   window.Seconds() / k,
		calls:    float64(calls1-calls0) / k,
		renewals: float64(renewals1-renewals0) / k,
		cpu:      float64(cpu1-cpu0) / k / 1e6,
		lost:     lost,
		leases:   n,
		acquire:  acquire.Seconds(),
	}
	r.perLease = r.cpu * 1e3 / float64(n)
	if theWire != nil && !be.InProcess && !be.File {
		r.hasWire, r.wire = true, float64(w1-w0)/k
		b.ReportMetric(r.wire, "wire-rt/interval")
	}
	b.ReportMetric(r.rounds, "rounds")
	b.ReportMetric(r.period, "s/round")
	b.ReportMetric(r.calls, "calls/interval")
	b.ReportMetric(r.renewals, "renew-calls/interval")
	b.ReportMetric(r.cpu, "cpu-ms/interval")
	b.ReportMetric(r.perLease, "cpu-us/lease")
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(r.acquire, "acquire-s")
	b.ReportMetric(0, "ns/op")
	addRow(r)

	// Release them, as a program would, before the store is dropped.
	rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer rcancel()
	run(n, acquirers, func(i int) { _ = hs[i].Release(rctx) })
}

// run calls f(i) for every i in [0, n), workers at once.
func run(n, workers int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

// cpuTime returns the process's CPU time so far (user + system), in ns.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
