package mysql

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// handwritten is the lease a user writes by hand on the same table: an
// upsert that takes a free key, and a compare-and-free by owner, each
// judged by affected rows (no token check, no corrupt-row check, no
// reading of the holder). It is the baseline of BenchmarkVersusHandwritten.
type handwritten struct {
	db               *sql.DB
	acquire, release string
}

func newHandwritten(db *sql.DB, table string) handwritten {
	return handwritten{db: db,
		acquire: "INSERT INTO " + table + " (`key`, owner, token, expires_at) VALUES (?, ?, 1, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)" +
			" ON DUPLICATE KEY UPDATE token = IF(expires_at IS NULL OR expires_at <= UTC_TIMESTAMP(6), token + 1, token)," +
			" owner = IF(expires_at IS NULL OR expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner)," +
			" expires_at = IF(expires_at IS NULL OR expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at)",
		release: "UPDATE " + table + " SET expires_at = NULL WHERE `key` = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(6)",
	}
}

func (h handwritten) cycle(ctx context.Context, key, owner string) error {
	res, err := h.db.ExecContext(ctx, h.acquire, key, owner, int64(time.Minute/time.Microsecond))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fence.ErrHeld
	}
	res, err = h.db.ExecContext(ctx, h.release, key, owner)
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
	h := newHandwritten(db, l.quotedTable())
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
// alternating order, on one connection of the same server, timing each;
// ratio is the median over all iterations of locker / handwritten, and
// locker-us and hand-us the medians of each. Pairing the two in one loop
// takes out the machine's drift.
func BenchmarkVersusHandwritten(b *testing.B) {
	db := newDB(b, 1)
	l := newTable(b, db)
	h := newHandwritten(db, l.quotedTable())
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
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
