package postgres

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/lockallbench"
)

// BenchmarkLockAll compares, for 2 and 8 keys, a Session.LockAll of
// the keys (one statement) and the release of its handles with as many
// Session.Lock calls one after another and their releases, on one lease
// table, each side on a Locker and pool of one connection of its own,
// alternating (see lockallbench.Run). Both sides count their round trips.
// Run it with
//
//	go test -run '^$' -bench 'LockAll|StatementVersus' -benchtime 300x -count 5 ./lockers/postgres/
func BenchmarkLockAll(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run("keys="+strconv.Itoa(n), func(b *testing.B) {
			table := newTable(b, newPool(b, 1, nil)).tableName()
			side := func() lockallbench.Side {
				var rt roundTrips
				l := newTestLocker(b, newPool(b, 1, &rt), &Options{Table: table})
				return lockallbench.Side{Locker: l.Locker, Requests: func() int64 { return int64(rt.count()) }}
			}
			lockallbench.Run(b, n, side(), side(), time.Minute)
		})
	}
}

// BenchmarkAcquireAllStatementVersusTransaction compares, for 2 and 8
// keys, AcquireAll's one statement (statement) with the same taking done
// as a transaction of a SELECT .. FOR UPDATE in key order, an UPDATE and
// COMMIT (transaction, the usual way to write it), each followed by one
// statement that frees the keys, on pools of one connection each,
// alternating which goes first. It reports each side's time per cycle,
// their ratio (statement/transaction) and their round trips per cycle.
func BenchmarkAcquireAllStatementVersusTransaction(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run("keys="+strconv.Itoa(n), func(b *testing.B) {
			table := newTable(b, newPool(b, 1, nil))
			var rtStmt, rtTx roundTrips
			stmt := newTestLocker(b, newPool(b, 1, &rtStmt), &Options{Table: table.tableName()})
			txPool := newPool(b, 1, &rtTx)
			quoted := table.quotedTable()
			ctx := b.Context()
			skeys, tkeys, owners := make([]string, n), make([]string, n), make([]string, n)
			for i := range n {
				skeys[i], tkeys[i], owners[i] = fmt.Sprintf("stmt-%d", i), fmt.Sprintf("tx-%d", i), fence.NewOwnerID()
			}
			free := "UPDATE " + quoted + " SET expires_at = NULL WHERE key = ANY ($1::text[])"
			byStatement := func() error {
				if _, err := stmt.d.AcquireAll(ctx, skeys, owners, time.Minute); err != nil {
					return err
				}
				_, err := stmt.d.db.exec(ctx, free, skeys)
				return err
			}
			byTransaction := func() error {
				tx, err := txPool.Begin(ctx)
				if err != nil {
					return err
				}
				defer func() { _ = tx.Rollback(ctx) }()
				rows, err := tx.Query(ctx, "SELECT key, expires_at > statement_timestamp() FROM "+quoted+" WHERE key = ANY ($1::text[]) ORDER BY key FOR UPDATE", tkeys)
				if err != nil {
					return err
				}
				found := 0
				for rows.Next() {
					var k string
					var held *bool
					if err := rows.Scan(&k, &held); err != nil {
						return err
					}
					if held != nil && *held {
						return fmt.Errorf("%q is held", k)
					}
					found++
				}
				if err := rows.Err(); err != nil {
					return err
				}
				if found < n {
					if _, err := tx.Exec(ctx, "INSERT INTO "+quoted+" (key, owner, token, expires_at) SELECT k, o, 1, NULL FROM unnest($1::text[], $2::text[]) AS u (k, o) ORDER BY k ON CONFLICT DO NOTHING", tkeys, owners); err != nil {
						return err
					}
				}
				if _, err := tx.Exec(ctx, "UPDATE "+quoted+" AS t SET owner = u.o, token = t.token + 1, expires_at = statement_timestamp() + interval '1 minute' FROM unnest($1::text[], $2::text[]) AS u (k, o) WHERE t.key = u.k", tkeys, owners); err != nil {
					return err
				}
				if err := tx.Commit(ctx); err != nil {
					return err
				}
				_, err = txPool.Exec(ctx, free, tkeys)
				return err
			}
			var tStmt, tTx time.Duration
			var nStmt, nTx int
			timed := func(f func() error, d *time.Duration, rt *roundTrips, reqs *int) {
				before := rt.count()
				start := time.Now()
				if err := f(); err != nil {
					b.Fatal(err)
				}
				*d += time.Since(start)
				*reqs += rt.count() - before
			}
			// The first of each creates the rows and prepares the statements.
			timed(byStatement, &tStmt, &rtStmt, &nStmt)
			timed(byTransaction, &tTx, &rtTx, &nTx)
			tStmt, tTx, nStmt, nTx = 0, 0, 0, 0
			iters := 0
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					timed(byStatement, &tStmt, &rtStmt, &nStmt)
					timed(byTransaction, &tTx, &rtTx, &nTx)
				} else {
					timed(byTransaction, &tTx, &rtTx, &nTx)
					timed(byStatement, &tStmt, &rtStmt, &nStmt)
				}
				iters++
			}
			b.ReportMetric(float64(tStmt.Nanoseconds())/float64(iters), "statement-ns/op")
			b.ReportMetric(float64(tTx.Nanoseconds())/float64(iters), "transaction-ns/op")
			b.ReportMetric(float64(tStmt)/float64(tTx), "statement/transaction")
			b.ReportMetric(float64(nStmt)/float64(iters), "statement-req/op")
			b.ReportMetric(float64(nTx)/float64(iters), "transaction-req/op")
		})
	}
}
