package postgres

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
)

// TestFailedAcquireWritesNothing runs a failing Acquire inside an open
// transaction and asks the server whether the transaction got an id: any
// write, including a row lock, would have given it one (and a commit record
// with a disk sync on commit). The same check on an INSERT .. ON CONFLICT DO
// UPDATE .. WHERE that fails shows that it does write. The WAL the failing
// statement generated, as EXPLAIN (ANALYZE, WAL) counts it for this session
// alone, must be zero too: the server-wide WAL position moves with other
// people's tests and cannot be used here (see BenchmarkHotKey).
func TestFailedAcquireWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := newPool(t, 2, nil)
	name := uniqueName("fence_test_")
	l := newLockerOn(t, pool, name)
	if _, err := l.Acquire(ctx, "hot", time.Minute, &fence.AcquireOptions{Owner: "holder"}); err != nil {
		t.Fatalf("Acquire: %v", err)
	}

	xactIDAfter := func(t *testing.T, try func(tx pgx.Tx) error) (assigned bool) {
		t.Helper()
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if err := try(tx); err != nil {
			t.Fatal(err)
		}
		var id *string
		if err := tx.QueryRow(ctx, "SELECT pg_current_xact_id_if_assigned()::text").Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id != nil
	}

	t.Run("locker", func(t *testing.T) {
		assigned := xactIDAfter(t, func(tx pgx.Tx) error {
			inTx, err := New(tx, &Options{Table: name})
			if err != nil {
				return err
			}
			for range 50 {
				if _, err := inTx.Acquire(ctx, "hot", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
					return err
				}
			}
			return nil
		})
		if assigned {
			t.Error("failed Acquire calls gave the transaction an id: they wrote")
		}
	})

	t.Run("upsert control", func(t *testing.T) {
		assigned := xactIDAfter(t, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO `+l.quotedTable()+` AS t (key, owner, token, expires_at)
VALUES ('hot', 'contender', 1, now() + interval '1 minute')
ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, token = t.token + 1, expires_at = excluded.expires_at
WHERE t.expires_at IS NULL OR t.expires_at <= now()`)
			return err
		})
		if !assigned {
			t.Error("a failed upsert got no transaction id: this check cannot tell writes from reads")
		}
	})

	// walRecords runs the acquire statement under EXPLAIN (ANALYZE, WAL)
	// and returns the WAL records of each plan node that reports them.
	walRecords := func(t *testing.T, key string) []float64 {
		t.Helper()
		var plan []byte
		if err := pool.QueryRow(ctx, "EXPLAIN (ANALYZE, WAL, FORMAT JSON) "+l.d.q.acquire,
			key, "contender", int64(60e6)).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		var nodes []struct{ Plan map[string]any }
		if err := json.Unmarshal(plan, &nodes); err != nil {
			t.Fatalf("plan %s: %v", plan, err)
		}
		var counts []float64
		var walk func(n map[string]any)
		walk = func(n map[string]any) {
			if r, ok := n["WAL Records"].(float64); ok {
				counts = append(counts, r)
			}
			kids, _ := n["Plans"].([]any)
			for _, k := range kids {
				if m, ok := k.(map[string]any); ok {
					walk(m)
				}
			}
		}
		for _, n := range nodes {
			walk(n.Plan)
		}
		if len(counts) == 0 {
			t.Fatalf("no WAL counts in the plan %s", plan)
		}
		return counts
	}

	t.Run("WAL", func(t *testing.T) {
		walRecords(t, "hot") // may set hint bits or prune the page
		for _, n := range walRecords(t, "hot") {
			if n != 0 {
				t.Errorf("a failed acquire wrote WAL: %v records in a plan node", n)
			}
		}
	})

	t.Run("WAL control", func(t *testing.T) {
		lease, err := l.Acquire(ctx, "free", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
		total := 0.0
		for _, n := range walRecords(t, "free") {
			total += n
		}
		if total == 0 {
			t.Error("a winning acquire reported no WAL: this check cannot see writes")
		}
	})
}
