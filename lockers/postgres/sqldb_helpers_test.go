package postgres

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/lib/pq"              // database/sql driver "postgres"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// way is a way into the locker: New on a pgx pool, or NewSQL on a
// *sql.DB with pgx's driver or with lib/pq.
type way struct {
	name string
	// sqlDriver is the database/sql driver's name; "" for New on a pool.
	sqlDriver string
}

// ways are the ways every test that runs on each of them covers.
var ways = []way{{"pgx", ""}, {"stdlib", "pgx"}, {"libpq", "postgres"}}

// sqlWays are the database/sql ways.
var sqlWays = ways[1:]

// locker returns a Locker of w on the lease table name (which it does not
// create), with a pool or *sql.DB of its own of conns connections, both
// closed when the test ends.
func (w way) locker(t testing.TB, name string, conns int) testLocker {
	t.Helper()
	if w.sqlDriver == "" {
		return newTestLocker(t, newPool(t, int32(conns), nil), &Options{Table: name})
	}
	return newSQLTestLocker(t, newSQLDB(t, w.sqlDriver, conns), &Options{Table: name})
}

// newFunc returns New or NewSQL on one pool or *sql.DB of w with at most
// conns connections, closed when the test ends; the Lockers it makes are
// the caller's to close.
func (w way) newFunc(t testing.TB, conns int) func(*Options) (*fence.Locker, error) {
	t.Helper()
	if w.sqlDriver == "" {
		pool := newPool(t, int32(conns), nil)
		return func(opts *Options) (*fence.Locker, error) { return New(pool, opts) }
	}
	db := newSQLDB(t, w.sqlDriver, conns)
	return func(opts *Options) (*fence.Locker, error) { return NewSQL(db, opts) }
}

// newSQLDB opens the test server through the database/sql driver
// driverName, with at most conns connections, closed when the test ends.
func newSQLDB(t testing.TB, driverName string, conns int) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, testenv.PostgresURL(t))
	if err != nil {
		t.Fatalf("sql.Open(%q): %v", driverName, err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// newSQLTestLocker is NewSQL, with the store under the Locker; the Locker
// is closed when the test ends.
func newSQLTestLocker(t testing.TB, db *sql.DB, opts *Options) testLocker {
	t.Helper()
	l, d, err := newLocker(sqlRunner{db}, opts, nil)
	if err != nil {
		t.Fatalf("NewSQL: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return testLocker{Locker: l, d: d}
}

// reachesServerError reports whether err reaches the server error type of
// w's driver: *pq.Error on lib/pq, *pgconn.PgError otherwise.
func reachesServerError(w way, err error) bool {
	if w.sqlDriver == "postgres" {
		_, ok := errors.AsType[*pq.Error](err)
		return ok
	}
	_, ok := errors.AsType[*pgconn.PgError](err)
	return ok
}

// counted returns a Locker of w on the lease table name (which it does
// not create) on one connection whose round trips rt counts, with no
// liveness pings (they would be round trips the locker did not make).
func (w way) counted(t testing.TB, name string, rt *roundTrips) testLocker {
	t.Helper()
	switch w.sqlDriver {
	case "":
		return newTestLocker(t, newPool(t, 1, rt), &Options{Table: name})
	case "pgx":
		cfg, err := pgx.ParseConfig(testenv.PostgresURL(t))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DialFunc = rt.dial
		noPing := stdlib.OptionShouldPing(func(context.Context, stdlib.ShouldPingParams) bool { return false })
		return newSQLTestLocker(t, oneConn(t, stdlib.OpenDB(*cfg, noPing)), &Options{Table: name})
	default:
		c, err := pq.NewConnector(testenv.PostgresURL(t))
		if err != nil {
			t.Fatal(err)
		}
		c.Dialer(rt)
		return newSQLTestLocker(t, oneConn(t, sql.OpenDB(c)), &Options{Table: name})
	}
}

// oneConn limits db to one connection and closes it when the test ends.
func oneConn(t testing.TB, db *sql.DB) *sql.DB {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Dial and DialTimeout make roundTrips a dialer of lib/pq.
func (r *roundTrips) Dial(network, addr string) (net.Conn, error) {
	return r.dial(context.Background(), network, addr)
}

func (r *roundTrips) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return r.dial(ctx, network, addr)
}
