package postgres

import (
	"context"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// pollOnly is a driver without release notifications (nor batches): a
// session on a Locker over it waits by polling.
type pollOnly struct{ driver.Locker }

// percentile returns the p-th percentile (nearest rank) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// BenchmarkHandOff measures the hand-off between two processes' views:
// a holder on locker A releases a key for which a Lock on locker B (its
// own pool) waits, and the time from the return of the release to the
// return of the waiter's Lock is one sample. p50_ms and p99_ms are over
// the run's iterations (run it with -benchtime 60x). "notify" wakes the
// waiter by LISTEN/NOTIFY; "poll" hides the notifications from the
// waiter's session, which then polls at the default PollInterval (1 s
// for this TTL, each sleep drawn from [0.5 s, 1 s]).
func BenchmarkHandOff(b *testing.B) {
	for _, mode := range []string{"notify", "poll"} {
		b.Run(mode, func(b *testing.B) {
			la, lb, _, _ := twoLockers(b)
			waiterLocker := lb.Locker
			if mode == "poll" {
				var err error
				waiterLocker, err = driver.Wrap(lb.Locker, func(d driver.Locker) driver.Locker { return pollOnly{d} })
				if err != nil {
					b.Fatal(err)
				}
			}
			busy := make(chan struct{}, 1)
			waiterLocker.SetObserver(&fence.Observer{AcquireAttempt: func(e fence.AcquireAttemptEvent) {
				if e.Outcome == fence.Busy {
					select {
					case busy <- struct{}{}:
					default:
					}
				}
			}})
			holders := waittest.NewSession(b, la.Locker, &fence.SessionOptions{TTL: time.Minute})
			waiters := waittest.NewSession(b, waiterLocker, &fence.SessionOptions{TTL: time.Minute})
			ctx := b.Context()
			var samples []time.Duration
			for b.Loop() {
				h, err := holders.Lock(ctx, "hand-off", nil)
				if err != nil {
					b.Fatal(err)
				}
				got := make(chan waittest.Result, 1)
				go func() {
					w, err := waiters.Lock(ctx, "hand-off", &fence.LockOptions{Wait: fence.WaitForever})
					got <- waittest.Result{Handle: w, Err: err, At: time.Now()}
				}()
				<-busy
				time.Sleep(5 * time.Millisecond) // into its wait
				if err := h.Release(ctx); err != nil {
					b.Fatal(err)
				}
				released := time.Now()
				r := <-got
				if r.Err != nil {
					b.Fatal(r.Err)
				}
				samples = append(samples, r.At.Sub(released))
				if err := r.Handle.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(samples)
			b.ReportMetric(float64(percentile(samples, 50))/1e6, "p50_ms")
			b.ReportMetric(float64(percentile(samples, 99))/1e6, "p99_ms")
			b.ReportMetric(float64(samples[len(samples)-1])/1e6, "max_ms")
		})
	}
}

// BenchmarkNotifyDelivery splits the hand-off of BenchmarkHandOff in two:
// a lease on locker A is released while locker B listens for the key
// (NotifyRelease); notify_p50_ms and notify_p99_ms are the time from the
// return of the release to the notification's arrival on B's channel,
// acquire_p50_ms and acquire_p99_ms that of B's Acquire that follows (a
// durable commit: the disk's flush time). Run it with -benchtime 200x.
func BenchmarkNotifyDelivery(b *testing.B) {
	la, lb, _, _ := twoLockers(b)
	ctx := b.Context()
	c, stop, err := lb.d.NotifyRelease(ctx, "k")
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	var delivery, acquire []time.Duration
	for b.Loop() {
		lease, err := la.Acquire(ctx, "k", time.Minute, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := la.Release(ctx, lease); err != nil {
			b.Fatal(err)
		}
		released := time.Now()
		<-c
		woken := time.Now()
		got, err := lb.Acquire(ctx, "k", time.Minute, nil)
		if err != nil {
			b.Fatal(err)
		}
		delivery = append(delivery, woken.Sub(released))
		acquire = append(acquire, time.Since(woken))
		if err := lb.Release(ctx, got); err != nil {
			b.Fatal(err)
		}
		<-c // B's own release
	}
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"notify", delivery}, {"acquire", acquire}} {
		slices.Sort(m.d)
		b.ReportMetric(float64(percentile(m.d, 50))/1e6, m.name+"_p50_ms")
		b.ReportMetric(float64(percentile(m.d, 99))/1e6, m.name+"_p99_ms")
	}
}

// fairnessWorkers contend for one key in BenchmarkFairness.
const fairnessWorkers = 8

// BenchmarkFairness runs fairnessWorkers workers that each, for 3 s per
// iteration, Lock one key (waiting), hold it 1 ms and release it:
// "one-session" all through one session; "two-lockers" half through a
// session on locker A and half on locker B (two pools: two processes);
// "one-worker" a single worker, the rate of the same cycle without
// contention. cycles/s counts all workers' cycles; jain is Jain's
// fairness index of the workers' cycle counts, (Σx)² / (n·Σx²): 1 when
// every worker got the same share, 1/n when one got them all.
func BenchmarkFairness(b *testing.B) {
	for _, mode := range []string{"one-session", "two-lockers", "one-worker"} {
		b.Run(mode, func(b *testing.B) {
			la, lb, _, _ := twoLockers(b)
			opts := &fence.SessionOptions{TTL: time.Minute}
			sessions := []*fence.Session{waittest.NewSession(b, la.Locker, opts)}
			if mode == "two-lockers" {
				sessions = append(sessions, waittest.NewSession(b, lb.Locker, opts))
			}
			workers := fairnessWorkers
			if mode == "one-worker" {
				workers = 1
			}
			var total int64
			var jain []float64
			for b.Loop() {
				counts := make([]int64, workers)
				ctx, cancel := context.WithTimeout(b.Context(), 3*time.Second)
				var wg sync.WaitGroup
				var failed atomic.Value
				for w := range workers {
					sess := sessions[w%len(sessions)]
					wg.Go(func() {
						for ctx.Err() == nil {
							h, err := sess.Lock(ctx, "fair", &fence.LockOptions{Wait: fence.WaitForever})
							if err != nil {
								if ctx.Err() == nil {
									failed.Store(err)
								}
								return
							}
							time.Sleep(time.Millisecond)
							if err := h.Release(context.Background()); err != nil {
								failed.Store(err)
								return
							}
							counts[w]++
						}
					})
				}
				wg.Wait()
				cancel()
				if err, ok := failed.Load().(error); ok {
					b.Fatal(err)
				}
				var sum, sq float64
				for _, c := range counts {
					total += c
					sum += float64(c)
					sq += float64(c) * float64(c)
				}
				jain = append(jain, sum*sum/(float64(len(counts))*sq))
				b.Logf("cycles per worker: %v", counts)
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "cycles/s")
			slices.Sort(jain)
			b.ReportMetric(jain[0], "jain")
		})
	}
}

// BenchmarkSessionRenew holds sessionLeases handles in one session (TTL
// 3 s, so a renewal round every second) and counts, with a pgx tracer,
// the statements its keepalive sends: each iteration waits one renewal
// interval; stmts/interval is the count over all of them (run it with
// -benchtime 5x). Renew/batch and Renew/each time one renewal of all the
// leases, in one statement (the store's RenewBatch, which the keepalive
// calls) and lease by lease.
func BenchmarkSessionRenew(b *testing.B) {
	b.Run("keepalive", func(b *testing.B) {
		var stmts statements
		l := newTable(b, stmts.pool(b, 8))
		const ttl = 3 * time.Second
		sess := waittest.NewSession(b, l.Locker, &fence.SessionOptions{TTL: ttl})
		handles := lockMany(b, sess, "many-", sessionLeases, 8)
		time.Sleep(2 * ttl / 3) // into step
		before, _ := stmts.count()
		for b.Loop() {
			time.Sleep(ttl / 3)
		}
		after, _ := stmts.count()
		for _, h := range handles {
			if err := h.Err(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(after-before)/float64(b.N), "stmts/interval")
		b.ReportMetric(sessionLeases, "leases")
	})
	for _, mode := range []string{"batch", "each"} {
		b.Run("Renew/"+mode, func(b *testing.B) {
			var stmts statements
			l := newTable(b, stmts.pool(b, 1))
			ctx := b.Context()
			leases := make([]fence.Lease, sessionLeases)
			for i := range leases {
				var err error
				if leases[i], err = l.Acquire(ctx, "many-"+strconv.Itoa(i), time.Hour, nil); err != nil {
					b.Fatal(err)
				}
			}
			var renew func([]fence.Lease) []error
			if mode == "batch" {
				renew = func(ls []fence.Lease) []error { return l.d.RenewBatch(ctx, ls) }
			} else {
				renew = func(ls []fence.Lease) []error {
					errs := make([]error, len(ls))
					for i, lease := range ls {
						_, errs[i] = l.Renew(ctx, lease)
					}
					return errs
				}
			}
			before, _ := stmts.count()
			for b.Loop() {
				for _, err := range renew(leases) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			after, _ := stmts.count()
			b.ReportMetric(float64(after-before)/float64(b.N), "stmts/op")
		})
	}
}

// notifyCostClients acquire and release in BenchmarkReleaseNotifyCost.
const notifyCostClients = 8

// BenchmarkReleaseNotifyCost measures what notifications cost a busy
// table: notifyCostClients clients, each on keys of its own among 1,000,
// acquire and release as fast as they can (durable commits). "nobody"
// has no listener on the table, so releases do not notify; "listening"
// has another Locker waiting on an unrelated key of the table, so every
// release notifies, and PostgreSQL serializes the notifying commits.
func BenchmarkReleaseNotifyCost(b *testing.B) {
	for _, mode := range []string{"nobody", "listening"} {
		b.Run(mode, func(b *testing.B) {
			la, lb, _, _ := twoLockers(b)
			ctx := b.Context()
			if mode == "listening" {
				_, stop, err := lb.d.NotifyRelease(ctx, "unrelated")
				if err != nil {
					b.Fatal(err)
				}
				defer stop()
			}
			const keys = 1000
			for i := range keys { // rows exist: no INSERT branch
				lease, err := la.Acquire(ctx, "k"+strconv.Itoa(i), time.Minute, nil)
				if err == nil {
					err = la.Release(ctx, lease)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Value
			b.ResetTimer()
			for w := range notifyCostClients {
				wg.Go(func() {
					for i := 0; next.Add(1) <= int64(b.N); i++ {
						key := "k" + strconv.Itoa(w+notifyCostClients*(i%(keys/notifyCostClients)))
						lease, err := la.Acquire(ctx, key, time.Minute, nil)
						if err == nil {
							err = la.Release(ctx, lease)
						}
						if err != nil {
							failed.Store(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if err, ok := failed.Load().(error); ok {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
		})
	}
}

// BenchmarkReleaseProbe measures what the notification probe adds to a
// release with nobody listening: each iteration acquires two keys and
// releases one with the driver's statement (which tries the slot's
// advisory lock and would notify) and the other with the same UPDATE
// without RETURNING, in alternating order, on one connection, timing each
// release; probe-% is the median over all iterations of (locker - plain)
// / plain.
func BenchmarkReleaseProbe(b *testing.B) {
	pool := newPool(b, 1, nil)
	l := newTable(b, pool)
	ctx := b.Context()
	plain := `UPDATE ` + l.quotedTable() + ` SET expires_at = NULL
WHERE key = $1 AND owner = $2 AND token = $3 AND expires_at > statement_timestamp()`
	release := func(i int, probe bool) time.Duration {
		key := "probe-" + strconv.Itoa(i)
		if !probe {
			key += "-plain"
		}
		lease, err := l.Acquire(ctx, key, time.Minute, nil)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if probe {
			err = l.d.Release(ctx, lease)
		} else {
			var tag pgconn.CommandTag
			tag, err = pool.Exec(ctx, plain, lease.Key, lease.Owner, int64(lease.Token))
			if err == nil && tag.RowsAffected() != 1 {
				err = fence.ErrNotHeld
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	b.ReportMetric(pairedMedian(b, release), "probe-%")
}
