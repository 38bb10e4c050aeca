package mysql

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"io"
	"log"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// The store logs connections the tests kill on purpose.
func init() { _ = mysqldrv.SetLogger(log.New(io.Discard, "", 0)) }

// newDB opens the test server with a pool of at most maxConns
// connections, closed when the test ends. params are DSN parameters
// added to FENCE_MYSQL_DSN's ("innodb_lock_wait_timeout=1").
func newDB(t testing.TB, maxConns int, params ...string) *sql.DB {
	t.Helper()
	return openDSN(t, withParams(testenv.MySQLDSN(t), params...), maxConns)
}

// openDSN opens dsn with a pool of at most maxConns connections.
func openDSN(t testing.TB, dsn string, maxConns int) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	t.Cleanup(func() { db.Close() })
	return db
}

// withParams adds DSN parameters to dsn.
func withParams(dsn string, params ...string) string {
	for _, p := range params {
		sep := "?"
		for _, c := range dsn {
			if c == '?' {
				sep = "&"
			}
		}
		dsn += sep + p
	}
	return dsn
}

// uniqueName returns prefix followed by random hex, a table name no other
// test run uses.
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
// database if it has one.
func (l testLocker) quotedTable() string { return l.d.table }

// newTestLocker is New, with the store under the Locker.
func newTestLocker(t testing.TB, db *sql.DB, opts *Options) testLocker {
	t.Helper()
	l, d, err := newLocker(db, opts, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return testLocker{Locker: l, d: d}
}

// newTable creates a lease table of a unique name with a Locker on db,
// dropped when the test ends.
func newTable(t testing.TB, db *sql.DB) testLocker {
	t.Helper()
	return newLockerOn(t, db, uniqueName("fence_test_"))
}

// newLockerOn creates the table name and a Locker on it, and drops the
// table when the test ends.
func newLockerOn(t testing.TB, db *sql.DB, name string) testLocker {
	t.Helper()
	l := newTestLocker(t, db, &Options{Table: name})
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { dropTable(t, db, l.quotedTable()) })
	return l
}

// dropTable drops a quoted table name after the test (t.Context is done by
// then, so it uses its own bounded context).
func dropTable(t testing.TB, db *sql.DB, quoted string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+quoted); err != nil {
		t.Errorf("drop %s: %v", quoted, err)
	}
}

// mustExec runs one SQL statement of a test's setup on db.
func mustExec(t testing.TB, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
