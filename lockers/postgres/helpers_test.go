package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// newPool connects to the test server with a small pool. If rt is not nil
// it counts the pool's round trips.
func newPool(t testing.TB, maxConns int32, rt *roundTrips) *pgxpool.Pool {
	t.Helper()
	return newPoolWith(t, maxConns, func(cfg *pgxpool.Config) {
		if rt != nil {
			cfg.ConnConfig.DialFunc = rt.dial
			// No liveness pings on acquire: they would be round trips
			// that the locker did not make.
			cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
		}
	})
}

// newPoolWith connects to the test server with a pool of maxConns
// connections, its configuration adjusted by set.
func newPoolWith(t testing.TB, maxConns int32, set func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(testenv.PostgresURL(t))
	if err != nil {
		t.Fatalf("parse FENCE_POSTGRES_URL: %v", err)
	}
	cfg.MaxConns = maxConns
	set(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// uniqueName returns prefix followed by random hex, a table or schema name
// no other test run uses.
func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// testLocker is a Locker of the tests, with the store under it.
type testLocker struct {
	*fence.Locker
	d *store
}

// quotedTable returns the name of the lease table quoted for SQL, with its
// schema if it has one.
func (l testLocker) quotedTable() string { return l.d.table.Sanitize() }

// tableName returns the name of the lease table as Options.Table takes it.
func (l testLocker) tableName() string { return strings.Join(l.d.table, ".") }

// newTestLocker is New, with the store under the Locker; the Locker is
// closed when the test ends.
func newTestLocker(t testing.TB, db DB, opts *Options) testLocker {
	t.Helper()
	l, d, err := newLocker(pgxRunner{db}, opts, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return testLocker{Locker: l, d: d}
}

// newTable creates a lease table of a unique name with a Locker on pool,
// dropped when the test ends.
func newTable(t testing.TB, pool *pgxpool.Pool) testLocker {
	t.Helper()
	return newLockerOn(t, pool, uniqueName("fence_test_"))
}

// newLockerOn creates the table name and a Locker on it, and drops the
// table when the test ends.
func newLockerOn(t testing.TB, pool *pgxpool.Pool, name string) testLocker {
	t.Helper()
	l := newTestLocker(t, pool, &Options{Table: name})
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { dropTable(t, pool, l.quotedTable()) })
	return l
}

// dropTable drops a quoted table name after the test (t.Context is done by
// then, so it uses its own bounded context).
func dropTable(t testing.TB, pool *pgxpool.Pool, quoted string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+quoted); err != nil {
		t.Errorf("drop %s: %v", quoted, err)
	}
}

// roundTrips counts round trips on the connections it dials: a write that
// follows a read which returned data starts a new round trip.
type roundTrips struct {
	mu      sync.Mutex
	n       int
	writing bool
}

func (r *roundTrips) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, rt: r}, nil
}

// count returns the round trips so far.
func (r *roundTrips) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

type countingConn struct {
	net.Conn
	rt *roundTrips
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.rt.mu.Lock()
	if !c.rt.writing {
		c.rt.n++
		c.rt.writing = true
	}
	c.rt.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.rt.mu.Lock()
		c.rt.writing = false
		c.rt.mu.Unlock()
	}
	return n, err
}

// statements counts the statements sent through the pools it traces (a
// pgx.QueryTracer: every Exec, Query and QueryRow), in total and by the
// first line of their SQL.
type statements struct {
	mu    sync.Mutex
	n     int
	bySQL map[string]int
}

// pool returns a pool of maxConns connections whose statements s counts.
func (s *statements) pool(t testing.TB, maxConns int32) *pgxpool.Pool {
	return newPoolWith(t, maxConns, func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = s })
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	line, _, _ := strings.Cut(data.SQL, "\n")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.bySQL == nil {
		s.bySQL = make(map[string]int)
	}
	s.bySQL[line]++
	return ctx
}

func (*statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// count returns the statements so far, and how many of them each first
// line of SQL started.
func (s *statements) count() (int, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, maps.Clone(s.bySQL)
}

// mustExec runs one SQL statement of a test's setup on pool.
func mustExec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
