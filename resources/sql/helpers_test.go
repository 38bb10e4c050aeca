package sql_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// uniqueName returns a table name no other test uses: prefix and a random
// suffix, in lower case.
func uniqueName(prefix string) string {
	return prefix + "_" + strings.ToLower(rand.Text()[:12])
}

// sqliteDSN returns the DSN of a new SQLite database in t.TempDir(), in
// WAL mode with a busy timeout and immediate write transactions.
func sqliteDSN(t testing.TB) string {
	return "file:" + filepath.Join(t.TempDir(), "fence.db") +
		"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
}

// openSQLite opens a new SQLite database in t.TempDir().
func openSQLite(t testing.TB) *sql.DB {
	t.Helper()
	return openSQLiteDSN(t, sqliteDSN(t))
}

// openSQLiteDSN opens the SQLite database dsn.
func openSQLiteDSN(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// openPgStd opens the test PostgreSQL server through database/sql.
func openPgStd(t testing.TB, maxConns int) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(maxConns)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// openPgPool opens the test PostgreSQL server through pgxpool, with tracer
// on every connection when it is not nil.
func openPgPool(t testing.TB, maxConns int32, tracer pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = maxConns
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// txn is a transaction of either driver family, for tests that run the
// same steps on each.
type txn interface {
	check(f *fencesql.Fences, name string, token fence.Token) error
	update(c *fencesql.Column, key any, token fence.Token, set string, args ...any) error
	exec(query string, args ...any) error
	scalar(query string, args ...any) (any, error)
	highest(f *fencesql.Fences, name string) (fence.Token, error)
}

type stdTxn struct {
	ctx context.Context
	tx  *sql.Tx
}

func (x stdTxn) check(f *fencesql.Fences, name string, token fence.Token) error {
	return f.Check(x.ctx, x.tx, name, token)
}

func (x stdTxn) update(c *fencesql.Column, key any, token fence.Token, set string, args ...any) error {
	return c.Update(x.ctx, x.tx, key, token, set, args...)
}

func (x stdTxn) highest(f *fencesql.Fences, name string) (fence.Token, error) {
	return f.Highest(x.ctx, x.tx, name)
}

func (x stdTxn) exec(query string, args ...any) error {
	_, err := x.tx.ExecContext(x.ctx, query, args...)
	return err
}

func (x stdTxn) scalar(query string, args ...any) (any, error) {
	var v any
	err := x.tx.QueryRowContext(x.ctx, query, args...).Scan(&v)
	return v, err
}

type pgxTxn struct {
	ctx context.Context
	tx  pgx.Tx
}

func (x pgxTxn) check(f *fencesql.Fences, name string, token fence.Token) error {
	return f.CheckPgx(x.ctx, x.tx, name, token)
}

func (x pgxTxn) update(c *fencesql.Column, key any, token fence.Token, set string, args ...any) error {
	return c.UpdatePgx(x.ctx, x.tx, key, token, set, args...)
}

func (x pgxTxn) highest(f *fencesql.Fences, name string) (fence.Token, error) {
	return f.HighestPgx(x.ctx, x.tx, name)
}

func (x pgxTxn) exec(query string, args ...any) error {
	_, err := x.tx.Exec(x.ctx, query, args...)
	return err
}

func (x pgxTxn) scalar(query string, args ...any) (any, error) {
	var v any
	err := x.tx.QueryRow(x.ctx, query, args...).Scan(&v)
	return v, err
}

// backend is one database reached through one driver family.
type backend struct {
	name    string
	dialect fencesql.Dialect
	// inTx runs fn in a transaction through RunTx or RunPgxTx. serializable
	// asks for that isolation level (SQLite always is).
	inTx func(ctx context.Context, serializable bool, fn func(txn) error) error
	// newResource returns a Resource on tables of this backend.
	newResource func(t fencesql.Tables) (*fencesql.Resource, error)
	// createTables creates tables on this backend.
	createTables func(ctx context.Context, t fencesql.Tables) error
	// highest reads the highest token of name with Fences.Highest or
	// HighestPgx on the database itself, outside any transaction.
	highest func(ctx context.Context, f *fencesql.Fences, name string) (fence.Token, error)
	// lostResource returns a Resource on tables of this backend, through
	// connections of its own, whose first COMMIT is applied but loses its
	// answer, calling after in between (see withLostResource).
	lostResource func(t *testing.T, tb fencesql.Tables, after func()) *fencesql.Resource
}

// newFences returns the Fences of table in b's dialect.
func (b *backend) newFences(table string) (*fencesql.Fences, error) {
	return fencesql.NewFencesFor(b.dialect, table)
}

// newColumn returns the Column of table in b's dialect.
func (b *backend) newColumn(table, keyColumn, fenceColumn string) (*fencesql.Column, error) {
	return fencesql.NewColumnFor(b.dialect, table, keyColumn, fenceColumn)
}

// do runs fn in its own transaction and fails the test on error.
func (b *backend) do(t testing.TB, fn func(txn) error) {
	t.Helper()
	if err := b.inTx(context.Background(), false, fn); err != nil {
		t.Fatal(err)
	}
}

// exec runs statements, each in its own transaction.
func (b *backend) exec(t testing.TB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		b.do(t, func(x txn) error { return x.exec(s) })
	}
}

// tables returns fresh table names and creates them; on PostgreSQL they
// are dropped when the test ends.
func (b *backend) tables(t testing.TB) fencesql.Tables {
	t.Helper()
	tb := fencesql.Tables{Fence: uniqueName("fence"), Value: uniqueName("value")}
	if err := b.createTables(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	b.dropLater(t, tb.Fence, tb.Value)
	return tb
}

// dropLater drops tables at the end of the test on PostgreSQL.
func (b *backend) dropLater(t testing.TB, tables ...string) {
	if b.dialect == fencesql.SQLite {
		return // the database file goes with t.TempDir()
	}
	t.Cleanup(func() {
		for _, tb := range tables {
			_ = b.inTx(context.Background(), false, func(x txn) error {
				return x.exec(fmt.Sprintf(`DROP TABLE IF EXISTS %q`, tb))
			})
		}
	})
}

func sqlBackend(name string, d fencesql.Dialect, db *sql.DB) *backend {
	return &backend{
		name:    name,
		dialect: d,
		inTx: func(ctx context.Context, serializable bool, fn func(txn) error) error {
			var opts *sql.TxOptions
			if serializable && d == fencesql.PostgreSQL {
				opts = &sql.TxOptions{Isolation: sql.LevelSerializable}
			}
			return fencesql.RunTx(ctx, db, opts, func(ctx context.Context, tx *sql.Tx) error {
				return fn(stdTxn{ctx, tx})
			})
		},
		newResource: func(t fencesql.Tables) (*fencesql.Resource, error) { return fencesql.NewResource(db, d, t) },
		highest: func(ctx context.Context, f *fencesql.Fences, name string) (fence.Token, error) {
			return f.Highest(ctx, db, name)
		},
		createTables: func(ctx context.Context, t fencesql.Tables) error {
			return fencesql.CreateTables(ctx, db, d, t)
		},
	}
}

func pgxBackend(pool *pgxpool.Pool) *backend {
	return &backend{
		name:    "postgres-pgx",
		dialect: fencesql.PostgreSQL,
		inTx: func(ctx context.Context, serializable bool, fn func(txn) error) error {
			opts := pgx.TxOptions{}
			if serializable {
				opts.IsoLevel = pgx.Serializable
			}
			return fencesql.RunPgxTx(ctx, pool, opts, func(ctx context.Context, tx pgx.Tx) error {
				return fn(pgxTxn{ctx, tx})
			})
		},
		newResource: func(t fencesql.Tables) (*fencesql.Resource, error) { return fencesql.NewPgxResource(pool, t) },
		highest: func(ctx context.Context, f *fencesql.Fences, name string) (fence.Token, error) {
			return f.HighestPgx(ctx, pool, name)
		},
		createTables: func(ctx context.Context, t fencesql.Tables) error { return fencesql.CreateTablesPgx(ctx, pool, t) },
	}
}

// backendKinds lists the databases and drivers every mode is tested on.
// open returns a backend with at most maxConns connections; the
// PostgreSQL ones skip (or fail under scripts/test.sh) without a server.
var backendKinds = []struct {
	name string
	open func(t testing.TB, maxConns int) *backend
}{
	{"sqlite", func(t testing.TB, n int) *backend {
		dsn := sqliteDSN(t)
		return withLostResource(sqlBackend("sqlite", fencesql.SQLite, openSQLiteDSN(t, dsn)), dsn)
	}},
	{"postgres-stdlib", func(t testing.TB, n int) *backend {
		return withLostResource(sqlBackend("postgres-stdlib", fencesql.PostgreSQL, openPgStd(t, n)), "")
	}},
	{"postgres-pgx", func(t testing.TB, n int) *backend {
		return withLostResource(pgxBackend(openPgPool(t, int32(n), nil)), "")
	}},
	{"mysql", func(t testing.TB, n int) *backend {
		return withLostResource(mysqlBackend(openMySQL(t, n, nil)), "")
	}},
}

// onEachBackend runs fn in a parallel subtest per backend kind.
func onEachBackend(t *testing.T, maxConns int, fn func(t *testing.T, b *backend)) {
	t.Helper()
	for _, k := range backendKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			fn(t, k.open(t, maxConns))
		})
	}
}
