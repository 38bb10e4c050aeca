package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
	memlock "github.com/fencekit/fence/lockers/memory"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// variant is one way of doing the same ledger write.
type variant struct {
	name  string
	write func(ctx context.Context) error
	total time.Duration
}

// runVariants runs every variant once per iteration, interleaved so that
// they share the machine's noise, and reports each one's time per write
// and its ratio to the variant named in base.
func runVariants(b *testing.B, vs []*variant, base map[string]string) {
	ctx := context.Background()
	for _, v := range vs { // warm the statement caches
		if err := v.write(ctx); err != nil {
			b.Fatal(v.name, err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		for _, v := range vs {
			start := time.Now()
			if err := v.write(ctx); err != nil {
				b.Fatal(v.name, err)
			}
			v.total += time.Since(start)
		}
	}
	per := map[string]float64{}
	for _, v := range vs {
		per[v.name] = float64(v.total.Nanoseconds()) / float64(b.N)
		b.ReportMetric(per[v.name], "ns/"+v.name)
	}
	for v, against := range base {
		b.ReportMetric(per[v]/per[against], v+"/"+against)
	}
}

// BenchmarkLedgerPostgres measures a ledger write (credit an account,
// record the entry, commit) on PostgreSQL through native pgx, without a
// fence and with each kind of fence, in one run:
//
//	go test -run XX -bench Ledger -benchtime 2000x ./resources/sql
//
// run-fenced is Run under a handle held across the run: BEGIN and the
// fence in one round trip.
func BenchmarkLedgerPostgres(b *testing.B) {
	conn, _, _ := connect(b)
	l := newLedger(b, conn)
	const token fence.Token = 5
	inTx := func(ctx context.Context, fn func(pgx.Tx) error) error {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	sess, err := fence.NewSession(memlock.New(nil), &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sess.Close(context.Background()) })
	held, err := sess.Lock(context.Background(), "account/6", nil)
	if err != nil {
		b.Fatal(err)
	}
	update := fmt.Sprintf(`UPDATE %q SET balance = balance + $1 WHERE id = $2`, l.accounts)
	insert := fmt.Sprintf(`INSERT INTO %q (account, amount) VALUES ($1, $2)`, l.entries)
	runVariants(b, []*variant{
		{name: "tx", write: func(ctx context.Context) error {
			return inTx(ctx, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, update, 1, 3); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, insert, 3, 1)
				return err
			})
		}},
		{name: "tx-fence-row", write: func(ctx context.Context) error {
			return inTx(ctx, func(tx pgx.Tx) error {
				if err := l.fences.Check(ctx, tx, "account/4", token); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, update, 1, 4); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, insert, 4, 1)
				return err
			})
		}},
		{name: "tx-fence-column", write: func(ctx context.Context) error {
			return inTx(ctx, func(tx pgx.Tx) error {
				if err := l.column.Update(ctx, tx, int64(5), token, "balance = balance + $1", int64(1)); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, insert, 5, 1)
				return err
			})
		}},
		{name: "run-fenced", write: func(ctx context.Context) error {
			return l.fences.Run(ctx, held, func(ctx context.Context, tx pgx.Tx) error { return l.write(ctx, tx, 6, 1) }, nil)
		}},
	}, map[string]string{"tx-fence-row": "tx", "tx-fence-column": "tx", "run-fenced": "tx"})
}

// BenchmarkLedgerSQLite measures the same write on SQLite through
// database/sql, in transactions retried on conflicts as Run's are,
// without and with a fence row.
func BenchmarkLedgerSQLite(b *testing.B) {
	db := openSQLite(b)
	ctx := context.Background()
	fences, err := fencesql.New(db, fencesql.SQLite, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := fences.Create(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
		CREATE TABLE entries (id INTEGER PRIMARY KEY, account INTEGER NOT NULL, amount INTEGER NOT NULL);
		INSERT INTO accounts VALUES (1, 0), (2, 0)`); err != nil {
		b.Fatal(err)
	}
	write := func(account int64, fenced bool) func(context.Context) error {
		return func(ctx context.Context) error {
			return fencesql.InTx(ctx, fences, sql.LevelDefault, func(ctx context.Context, tx *sql.Tx) error {
				if fenced {
					if err := fences.Check(ctx, tx, "account", 5); err != nil {
						return err
					}
				}
				if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + 1 WHERE id = $1`, account); err != nil {
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO entries (account, amount) VALUES ($1, 1)`, account)
				return err
			})
		}
	}
	runVariants(b, []*variant{
		{name: "tx", write: write(1, false)},
		{name: "tx-fence-row", write: write(2, true)},
	}, map[string]string{"tx-fence-row": "tx"})
}

// BenchmarkLedgerMySQL measures the ledger write on MariaDB through
// database/sql on one connection, without a fence, with a fence
// row (and, for comparison, with MariaDB's one-statement RETURNING form
// of it) and with a fenced column, in one run; with the driver's server-side
// prepared statements (its default: two round trips per statement with
// arguments) and with interpolateParams=true (one):
//
//	go test -run XX -bench LedgerMySQL -benchtime 2000x ./resources/sql
func BenchmarkLedgerMySQL(b *testing.B) {
	for _, interpolate := range []bool{false, true} {
		name := "prepared"
		if interpolate {
			name = "interpolated"
		}
		b.Run(name, func(b *testing.B) {
			db := openMySQL(b, 1, func(c *mysql.Config) { c.InterpolateParams = interpolate })
			ctx := context.Background()
			tb := fencesql.Options{FenceTable: uniqueName("fence"), ValueTable: uniqueName("value")}
			accounts, entries := mysqlQuote(uniqueName("accounts")), mysqlQuote(uniqueName("entries"))
			fences, err := fencesql.New(db, fencesql.MySQL, &tb)
			if err != nil {
				b.Fatal(err)
			}
			if err := fences.Create(ctx); err != nil {
				b.Fatal(err)
			}
			column, err := fences.Column(strings.Trim(accounts, "`"), "id", "fence")
			if err != nil {
				b.Fatal(err)
			}
			col := column.Definition()
			for _, s := range []string{
				"CREATE TABLE " + accounts + " (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL, " + col + ") ENGINE=InnoDB",
				"CREATE TABLE " + entries + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, account BIGINT NOT NULL, amount BIGINT NOT NULL) ENGINE=InnoDB",
				"INSERT INTO " + accounts + " (id, balance) VALUES (1, 0), (2, 0), (3, 0)",
			} {
				if _, err := db.ExecContext(ctx, s); err != nil {
					b.Fatal(err)
				}
			}
			b.Cleanup(func() {
				for _, t := range []string{mysqlQuote(tb.FenceTable), mysqlQuote(tb.ValueTable), accounts, entries} {
					_, _ = db.Exec("DROP TABLE IF EXISTS " + t)
				}
			})
			const token fence.Token = 5
			update := "UPDATE " + accounts + " SET balance = balance + ? WHERE id = ?"
			insert := "INSERT INTO " + entries + " (account, amount) VALUES (?, ?)"
			returning := "INSERT INTO " + mysqlQuote(tb.FenceTable) + " (`key`, `token`) VALUES (?, ?) ON DUPLICATE KEY UPDATE " +
				"`token` = IF(`token` > 0 AND `token` <= VALUES(`token`), VALUES(`token`), `token`) RETURNING `token`"
			write := func(account int64, fenced func(ctx context.Context, tx *sql.Tx) error) func(context.Context) error {
				return func(ctx context.Context) error {
					return fencesql.InTx(ctx, fences, sql.LevelDefault, func(ctx context.Context, tx *sql.Tx) error {
						if fenced != nil {
							if err := fenced(ctx, tx); err != nil {
								return err
							}
						} else if _, err := tx.ExecContext(ctx, update, 1, account); err != nil {
							return err
						}
						_, err := tx.ExecContext(ctx, insert, account, 1)
						return err
					})
				}
			}
			runVariants(b, []*variant{
				{name: "tx", write: write(1, nil)},
				{name: "tx-fence-row", write: write(2, func(ctx context.Context, tx *sql.Tx) error {
					if err := fences.Check(ctx, tx, "account/2", token); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, update, 1, 2)
					return err
				})},
				{name: "tx-fence-row-returning", write: write(2, func(ctx context.Context, tx *sql.Tx) error {
					// For comparison only: MariaDB's one-statement form,
					// which MySQL 8 lacks (no RETURNING).
					var stored int64
					if err := tx.QueryRowContext(ctx, returning, "account/2r", int64(token)).Scan(&stored); err != nil {
						return err
					}
					if stored != int64(token) {
						return fmt.Errorf("stale: %d", stored)
					}
					_, err := tx.ExecContext(ctx, update, 1, 2)
					return err
				})},
				{name: "tx-fence-column", write: write(3, func(ctx context.Context, tx *sql.Tx) error {
					return column.Update(ctx, tx, int64(3), token, "balance = balance + ?", int64(1))
				})},
			}, map[string]string{"tx-fence-row": "tx", "tx-fence-row-returning": "tx", "tx-fence-column": "tx"})
		})
	}
}
