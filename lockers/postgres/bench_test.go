package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
)

// BenchmarkAcquireRelease takes and frees distinct keys, one client: two
// round trips per iteration.
func BenchmarkAcquireRelease(b *testing.B) {
	pool := newPool(b, 1, nil)
	l := newTable(b, pool)
	ctx := b.Context()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		lease, err := l.Acquire(ctx, "key-"+strconv.Itoa(i), time.Minute, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx, lease); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

// BenchmarkAcquireReleaseSQL is BenchmarkAcquireRelease through NewSQL on
// a *sql.DB of one connection, with pgx's driver (stdlib: two round trips
// per iteration) and with lib/pq (libpq: four, see
// TestOneRoundTripPerCall).
func BenchmarkAcquireReleaseSQL(b *testing.B) {
	for _, w := range sqlWays {
		b.Run(w.name, func(b *testing.B) {
			table := newTable(b, newPool(b, 1, nil))
			l := w.locker(b, table.tableName(), 1)
			ctx := b.Context()
			for i := 0; b.Loop(); i++ {
				lease, err := l.Acquire(ctx, "key-"+strconv.Itoa(i), time.Minute, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx, lease); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
		})
	}
}

// BenchmarkLayerCost measures what the portable layer costs on a
// PostgreSQL acquire+release: each iteration runs one cycle through the
// portable fence.Locker and one on its bare store, in alternating order, on one
// connection, timing each; layer-% is the median over all iterations of
// (portable - store) / driver. Pairing the two in one loop takes out the
// machine's drift, which moves whole runs by tens of percent here.
func BenchmarkLayerCost(b *testing.B) {
	pool := newPool(b, 1, nil)
	l := newTable(b, pool)
	d := l.d
	ctx := b.Context()
	cycle := func(i int, portable bool) time.Duration {
		key := "layer-" + strconv.Itoa(i)
		start := time.Now()
		if portable {
			lease, err := l.Acquire(ctx, key, time.Minute, nil)
			if err == nil {
				err = l.Release(ctx, lease)
			}
			if err != nil {
				b.Fatal(err)
			}
		} else {
			lease, err := d.Acquire(ctx, key+"-d", fence.NewOwnerID(), time.Minute)
			if err == nil {
				err = d.Release(ctx, lease)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	b.ReportMetric(pairedMedian(b, cycle), "layer-%")
}

// pairedMedian runs timed(i, true) and timed(i, false) once per
// iteration, in alternating order, and returns the median over all
// iterations of (true - false) / false, in percent.
func pairedMedian(b *testing.B, timed func(i int, which bool) time.Duration) float64 {
	var diffs []float64
	for i := 0; b.Loop(); i++ {
		first := i%2 == 0
		x := timed(i, first)
		y := timed(i, !first)
		p, q := x, y
		if !first {
			p, q = y, x
		}
		diffs = append(diffs, 100*float64(p-q)/float64(q))
	}
	slices.Sort(diffs)
	return diffs[len(diffs)/2]
}

// hotKeyContenders is the number of clients trying a held key at once.
const hotKeyContenders = 8

// BenchmarkHotKey measures failed tries per second on a held key by
// hotKeyContenders clients, for this locker and for two baselines on the
// same server: an INSERT .. ON CONFLICT DO UPDATE .. WHERE lease (whose
// failed tries lock the row and commit) and session advisory locks
// (pg_try_advisory_lock, which keep nothing on disk and issue no token).
//
// wal-B/op is the growth of the server's WAL position per try. The position
// is server-wide, so tests or benchmarks of others running at the same
// time inflate it; on a quiet server it shows what a failed try writes.
func BenchmarkHotKey(b *testing.B) {
	pool := newPool(b, hotKeyContenders+1, nil)
	l := newTable(b, pool)
	ctx := b.Context()
	if _, err := l.Acquire(ctx, "hot", time.Hour, nil); err != nil {
		b.Fatal(err)
	}
	upsert := `INSERT INTO ` + l.quotedTable() + ` AS t (key, owner, token, expires_at)
VALUES ($1, $2, 1, statement_timestamp() + interval '1 minute')
ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, token = t.token + 1, expires_at = excluded.expires_at
WHERE t.expires_at IS NULL OR t.expires_at <= statement_timestamp()
RETURNING token`
	holder, err := pool.Acquire(ctx) // holds the advisory lock for the run
	if err != nil {
		b.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1)", AdvisoryKey("hot")); err != nil {
		b.Fatal(err)
	}

	b.Run("locker", func(b *testing.B) {
		contend(b, pool, func(ctx context.Context) error {
			_, err := l.Acquire(ctx, "hot", time.Minute, nil)
			if errors.Is(err, fence.ErrHeld) {
				return nil
			}
			return fmt.Errorf("want ErrHeld, got %v", err)
		})
	})
	b.Run("upsert", func(b *testing.B) {
		contend(b, pool, func(ctx context.Context) error {
			var token int64
			err := pool.QueryRow(ctx, upsert, "hot", "contender").Scan(&token)
			if err == nil {
				return errors.New("the upsert took a held key")
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			return nil
		})
	})
	b.Run("advisory", func(b *testing.B) {
		contend(b, pool, func(ctx context.Context) error {
			var ok bool
			if err := pool.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", AdvisoryKey("hot")).Scan(&ok); err != nil {
				return err
			}
			if ok {
				return errors.New("took a held advisory lock")
			}
			return nil
		})
	})
}

// contend runs try b.N times spread over hotKeyContenders goroutines and
// reports tries per second and the server's WAL growth per try.
func contend(b *testing.B, pool *pgxpool.Pool, try func(context.Context) error) {
	ctx := b.Context()
	lsn := func() int64 {
		var n int64
		if err := pool.QueryRow(ctx, "SELECT pg_current_wal_lsn() - '0/0'").Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
	)
	start := lsn()
	b.ResetTimer()
	for range hotKeyContenders {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := try(ctx); err != nil {
					errMu.Lock()
					first = cmpOr(first, err)
					errMu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if first != nil {
		b.Fatal(first)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tries/s")
	b.ReportMetric(float64(lsn()-start)/float64(b.N), "wal-B/op")
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
