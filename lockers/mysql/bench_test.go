package mysql

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// handwritten is the lease a user writes by hand on the same table: an
// upsert that takes a free key, and a compare-and-free by owner, each
// judged by affected rows (no token check, no corrupt-row check, no
// reading of the holder), prepared once as the Locker's statements are.
// It is the baseline of BenchmarkVersusHandwritten.
type handwritten struct {
	acquire, release *sql.Stmt
}

func newHandwritten(b *testing.B, db *sql.DB, table string) handwritten {
	prepare := func(q string) *sql.Stmt {
		s, err := db.PrepareContext(b.Context(), q)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	return handwritten{
		acquire: prepare("INSERT INTO " + table + " (`key`, owner, token, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)" +
			" ON DUPLICATE KEY UPDATE token = IF(expires_at IS NULL OR expires_at <= UTC_TIMESTAMP(6), token + 1, token)," +
			" owner = IF(expires_at IS NULL OR expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner)," +
			" expires_at = IF(expires_at IS NULL OR expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at)"),
		release: prepare("UPDATE " + table + " SET expires_at = NULL WHERE `key` = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(6)"),
	}
}

func (h handwritten) cycle(ctx context.Context, key, owner string) error {
	res, err := h.acquire.ExecContext(ctx, key, owner, int64(time.Minute/time.Microsecond))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fence.ErrHeld
	}
	res, err = h.release.ExecContext(ctx, key, owner)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fence.ErrNotHeld
	}
	return nil
}

// BenchmarkAcquireRelease takes and frees distinct keys, one client, with
// the locker and with the hand-written statements on the same server.
func BenchmarkAcquireRelease(b *testing.B) {
	db := newDB(b, 1)
	l := newTable(b, db)
	h := newHandwritten(b, db, l.quotedTable())
	ctx := b.Context()
	b.Run("locker", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			lease, err := l.Acquire(ctx, "key-"+strconv.Itoa(i), time.Minute, nil)
			if err == nil {
				err = l.Release(ctx, lease)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
	})
	b.Run("handwritten", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if err := h.cycle(ctx, "hand-"+strconv.Itoa(i), "owner"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
	})
}

// BenchmarkVersusHandwritten runs, in each iteration, one acquire+release
// through the locker and one with the hand-written statements, in
// alternating order, on the same server, timing each; ratio is the median
// over all iterations of locker / handwritten, and locker-us and hand-us
// the medians of each. Pairing the two in one loop takes out the
// machine's drift. wake=off runs both on a pool of one connection, where
// the Locker rings no bells; wake=on gives the Locker's bells a
// connection of their own (WakeConns 2 on a pool of three), as on a pool
// without a limit: each lease also takes and frees its named lock there.
func BenchmarkVersusHandwritten(b *testing.B) {
	for _, wake := range []string{"off", "on"} {
		b.Run("wake="+wake, func(b *testing.B) {
			db := newDB(b, 1)
			l := newTable(b, db)
			if wake == "on" {
				db = newDB(b, 3)
				table := l.quotedTable()
				l = newTestLocker(b, db, &Options{Table: table[1 : len(table)-1], WakeConns: 2})
				b.Cleanup(func() { _ = l.Close() })
			}
			h := newHandwritten(b, db, l.quotedTable())
			ctx := b.Context()
			var mine, hand, ratios []float64
			timed := func(f func() error) float64 {
				start := time.Now()
				if err := f(); err != nil {
					b.Fatal(err)
				}
				return float64(time.Since(start).Microseconds())
			}
			for i := 0; b.Loop(); i++ {
				key := "pair-" + strconv.Itoa(i)
				lockerCycle := func() error {
					lease, err := l.Acquire(ctx, key, time.Minute, nil)
					if err == nil {
						err = l.Release(ctx, lease)
					}
					return err
				}
				handCycle := func() error { return h.cycle(ctx, key+"-h", "owner") }
				var m, hw float64
				if i%2 == 0 {
					m, hw = timed(lockerCycle), timed(handCycle)
				} else {
					hw, m = timed(handCycle), timed(lockerCycle)
				}
				mine, hand = append(mine, m), append(hand, hw)
				if hw > 0 {
					ratios = append(ratios, m/hw)
				}
			}
			b.ReportMetric(median(ratios), "ratio")
			b.ReportMetric(median(mine), "locker-us")
			b.ReportMetric(median(hand), "hand-us")
		})
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// percentile returns the p-th percentile (nearest rank) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// BenchmarkHandOff measures the hand-off between two processes' views:
// a holder on locker A releases a key for which a Lock on locker B (its
// own pool) waits, and the time from the return of the release to the
// return of the waiter's Lock is one sample. p50_ms and p99_ms are over
// the run's iterations (run it with -benchtime 200x). "bell" wakes the
// waiter through the holder's named lock; "poll" turns the waiter's
// wake-ups off (WakeConns -1), so it polls at the default PollInterval
// (1 s for this TTL, each sleep drawn from [0.5 s, 1 s]).
func BenchmarkHandOff(b *testing.B) {
	for _, mode := range []string{"bell", "poll"} {
		b.Run(mode, func(b *testing.B) {
			table := newTable(b, newDB(b, 2)).d.table
			table = table[1 : len(table)-1]
			la := newTestLocker(b, newDB(b, 0), &Options{Table: table})
			opts := &Options{Table: table}
			if mode == "poll" {
				opts.WakeConns = -1
			}
			lb := newTestLocker(b, newDB(b, 0), opts)
			b.Cleanup(func() { _ = la.Close(); _ = lb.Close() })
			busy := make(chan struct{}, 1)
			lb.SetObserver(&fence.Observer{AcquireAttempt: func(e fence.AcquireAttemptEvent) {
				if e.Outcome == fence.Busy {
					select {
					case busy <- struct{}{}:
					default:
					}
				}
			}})
			holders := waittest.NewSession(b, la.Locker, &fence.SessionOptions{TTL: time.Minute})
			waiters := waittest.NewSession(b, lb.Locker, &fence.SessionOptions{TTL: time.Minute})
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

// BenchmarkBellDelivery splits the hand-off of BenchmarkHandOff: a lease
// on locker A is released while locker B waits on the key's bell
// (NotifyRelease, after A's bell is seen held); wake_p50_ms and
// wake_p99_ms are the time from the return of the release to the
// wake-up on B's channel, acquire_p50_ms and acquire_p99_ms that of B's
// Acquire that follows (a durable commit). Run it with -benchtime 200x.
func BenchmarkBellDelivery(b *testing.B) {
	admin := newDB(b, 2)
	table := newTable(b, admin).d.table
	table = table[1 : len(table)-1]
	la := newTestLocker(b, newDB(b, 0), &Options{Table: table})
	lb := newTestLocker(b, newDB(b, 0), &Options{Table: table})
	b.Cleanup(func() { _ = la.Close(); _ = lb.Close() })
	ctx := b.Context()
	name := bellName(la.d.table, "bell")
	var wakes, acquires []time.Duration
	for b.Loop() {
		lease, err := la.Acquire(ctx, "bell", time.Minute, nil)
		if err != nil {
			b.Fatal(err)
		}
		for {
			var id sql.NullInt64
			if err := admin.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", name).Scan(&id); err != nil {
				b.Fatal(err)
			}
			if id.Valid {
				break
			}
			time.Sleep(time.Millisecond)
		}
		c, stop, err := lb.d.NotifyRelease(ctx, "bell")
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // into its GET_LOCK
		if err := la.Release(ctx, lease); err != nil {
			b.Fatal(err)
		}
		released := time.Now()
		<-c
		woke := time.Now()
		stop()
		won, err := lb.Acquire(ctx, "bell", time.Minute, nil)
		if err != nil {
			b.Fatal(err)
		}
		acquired := time.Now()
		wakes, acquires = append(wakes, woke.Sub(released)), append(acquires, acquired.Sub(woke))
		if err := lb.Release(ctx, won); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(wakes)
	slices.Sort(acquires)
	b.ReportMetric(float64(percentile(wakes, 50))/1e6, "wake_p50_ms")
	b.ReportMetric(float64(percentile(wakes, 99))/1e6, "wake_p99_ms")
	b.ReportMetric(float64(percentile(acquires, 50))/1e6, "acquire_p50_ms")
	b.ReportMetric(float64(percentile(acquires, 99))/1e6, "acquire_p99_ms")
}
