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

// fences is a *fencesql.Fences of either driver family, as the tests
// that run the same steps on each use it.
type fences interface {
	Create(ctx context.Context) error
	SchemaSQL() []string
	Resource() *fence.Resource
}

// column is a *fencesql.Column of either driver family.
type column interface{ Definition() string }

// newColumn returns f's Column of table.
func newColumn(f fences, table, keyColumn, fenceColumn string) (column, error) {
	switch f := f.(type) {
	case *fencesql.Fences[*sql.Tx]:
		c, err := f.Column(table, keyColumn, fenceColumn)
		if err != nil {
			return nil, err
		}
		return c, nil
	case *fencesql.Fences[pgx.Tx]:
		c, err := f.Column(table, keyColumn, fenceColumn)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	panic(fmt.Sprintf("fences of type %T", f))
}

// updateSQL returns the statement c's Update runs.
func updateSQL(c column, set string, nargs int) (string, error) {
	switch c := c.(type) {
	case *fencesql.Column[*sql.Tx]:
		return fencesql.UpdateSQL(c, set, nargs)
	case *fencesql.Column[pgx.Tx]:
		return fencesql.UpdateSQL(c, set, nargs)
	}
	panic(fmt.Sprintf("column of type %T", c))
}

// txn is a transaction of either driver family, for tests that run the
// same steps on each.
type txn interface {
	check(f fences, name string, token fence.Token) error
	update(c column, key any, token fence.Token, set string, args ...any) error
	exec(query string, args ...any) error
	scalar(query string, args ...any) (any, error)
}

type stdTxn struct {
	ctx context.Context
	tx  *sql.Tx
}

func (x stdTxn) check(f fences, name string, token fence.Token) error {
	return f.(*fencesql.Fences[*sql.Tx]).Check(x.ctx, x.tx, name, token)
}

func (x stdTxn) update(c column, key any, token fence.Token, set string, args ...any) error {
	return c.(*fencesql.Column[*sql.Tx]).Update(x.ctx, x.tx, key, token, set, args...)
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

func (x pgxTxn) check(f fences, name string, token fence.Token) error {
	return f.(*fencesql.Fences[pgx.Tx]).Check(x.ctx, x.tx, name, token)
}

func (x pgxTxn) update(c column, key any, token fence.Token, set string, args ...any) error {
	return c.(*fencesql.Column[pgx.Tx]).Update(x.ctx, x.tx, key, token, set, args...)
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
	// newFences returns the Fences of the tables opts names.
	newFences func(opts *fencesql.Options) (fences, error)
	// inTx runs fn in a transaction, retried on conflicts, rolled back
	// on error. serializable asks for that isolation level (SQLite
	// always is).
	inTx func(ctx context.Context, serializable bool, fn func(txn) error) error
	// lostResource returns a Resource on tables of this backend, through
	// connections of its own, whose first COMMIT is applied but loses its
	// answer, calling after in between (see withLostResource).
	lostResource func(t *testing.T, tb fencesql.Options, after func()) *fence.Resource
}

// mustFences returns the Fences of tb, failing the test on error.
func (b *backend) mustFences(t testing.TB, tb fencesql.Options) fences {
	t.Helper()
	f, err := b.newFences(&tb)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// newColumn returns the Column of table on this backend.
func (b *backend) newColumn(table, keyColumn, fenceColumn string) (column, error) {
	f, err := b.newFences(nil)
	if err != nil {
		return nil, err
	}
	return newColumn(f, table, keyColumn, fenceColumn)
}

// offlineFences returns Fences of dialect d on a database that is never
// reached, for the tests of statements.
func offlineFences(t testing.TB, d fencesql.Dialect) *fencesql.Fences[*sql.Tx] {
	t.Helper()
	f, err := fencesql.New(new(sql.DB), d, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// offlineColumn returns the Column of table in dialect d, for the tests
// of statements.
func offlineColumn(t testing.TB, d fencesql.Dialect, table, keyColumn, fenceColumn string) *fencesql.Column[*sql.Tx] {
	t.Helper()
	c, err := offlineFences(t, d).Column(table, keyColumn, fenceColumn)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newResource returns the Resource on tables tb.
func (b *backend) newResource(tb fencesql.Options) (*fence.Resource, error) {
	f, err := b.newFences(&tb)
	if err != nil {
		return nil, err
	}
	return f.Resource(), nil
}

// createTables creates the tables tb on this backend.
func (b *backend) createTables(ctx context.Context, tb fencesql.Options) error {
	f, err := b.newFences(&tb)
	if err != nil {
		return err
	}
	return f.Create(ctx)
}

// highest reads the highest token of name in f's fence table, outside
// any transaction, through f's Resource.
func (b *backend) highest(ctx context.Context, f fences, name string) (fence.Token, error) {
	return f.Resource().Highest(ctx, name)
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

// tables returns fresh table names and creates them; on PostgreSQL and
// MySQL they are dropped when the test ends.
func (b *backend) tables(t testing.TB) fencesql.Options {
	t.Helper()
	tb := fencesql.Options{FenceTable: uniqueName("fence"), ValueTable: uniqueName("value")}
	if err := b.createTables(context.Background(), tb); err != nil {
		t.Fatal(err)
	}
	b.dropLater(t, tb.FenceTable, tb.ValueTable)
	return tb
}

// dropLater drops tables at the end of the test on PostgreSQL and MySQL.
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

// stdFences returns newFences for db.
func stdFences(db *sql.DB, d fencesql.Dialect) func(opts *fencesql.Options) (fences, error) {
	return func(opts *fencesql.Options) (fences, error) {
		f, err := fencesql.New(db, d, opts)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}

// pgxFences returns newFences for db.
func pgxFences(db fencesql.PgxDB) func(opts *fencesql.Options) (fences, error) {
	return func(opts *fencesql.Options) (fences, error) {
		f, err := fencesql.NewPgx(db, opts)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}

func sqlBackend(name string, d fencesql.Dialect, db *sql.DB) *backend {
	tx, err := fencesql.New(db, d, nil)
	if err != nil {
		panic(err)
	}
	return &backend{
		name:      name,
		dialect:   d,
		newFences: stdFences(db, d),
		inTx: func(ctx context.Context, serializable bool, fn func(txn) error) error {
			iso := sql.LevelDefault
			if serializable && d == fencesql.PostgreSQL {
				iso = sql.LevelSerializable
			}
			return fencesql.InTx(ctx, tx, iso, func(ctx context.Context, tx *sql.Tx) error {
				return fn(stdTxn{ctx, tx})
			})
		},
	}
}

func pgxBackend(pool *pgxpool.Pool) *backend {
	tx, err := fencesql.NewPgx(pool, nil)
	if err != nil {
		panic(err)
	}
	return &backend{
		name:      "postgres-pgx",
		dialect:   fencesql.PostgreSQL,
		newFences: pgxFences(pool),
		inTx: func(ctx context.Context, serializable bool, fn func(txn) error) error {
			iso := sql.LevelDefault
			if serializable {
				iso = sql.LevelSerializable
			}
			return fencesql.InTx(ctx, tx, iso, func(ctx context.Context, tx pgx.Tx) error {
				return fn(pgxTxn{ctx, tx})
			})
		},
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
