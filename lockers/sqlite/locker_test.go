package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/lockers/lockertest"
	"github.com/fencekit/fence/lockers/sqlite"
)

// fileURL returns the URL of a fresh database file of the test.
func fileURL(t *testing.T) string {
	return "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "locks.db"))
}

// open opens a Locker on url with clock (nil: the system clock), closed
// when the test ends.
func open(t *testing.T, url string, clock fence.Clock) *fence.Locker {
	t.Helper()
	l, err := fence.OpenLocker(t.Context(), url, &fence.OpenOptions{Clock: clock})
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func TestConformance(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	url := fileURL(t)
	// Every Locker from New is a database of its own on the one file, as
	// in separate processes; Restart closes them all.
	var mu sync.Mutex
	var opened []*fence.Locker
	const shortTTL = time.Second
	lockertest.Run(t, lockertest.Harness{
		New: func(t *testing.T) *fence.Locker {
			l := open(t, url, clock)
			mu.Lock()
			opened = append(opened, l)
			mu.Unlock()
			return l
		},
		TTL:      time.Hour,
		ShortTTL: shortTTL,
		Expire:   func(*testing.T) { clock.Advance(shortTTL + time.Millisecond) },
		Pass:     func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		Restart: func(t *testing.T) {
			mu.Lock()
			defer mu.Unlock()
			for _, l := range opened {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			}
			opened = nil
		},
		MaxKeyLen: sqlite.MaxKeyLen,
		BadTTLs:   []time.Duration{sqlite.MinTTL - time.Nanosecond, sqlite.MaxTTL + time.Nanosecond},
		Now:       clock.Now,
	})
}

// TestNew: a Locker over a database of the program's own creates its
// table on the first call, and As gives that database back.
func TestNew(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "app.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := sqlite.New(db, &sqlite.Options{Table: "app_locks"})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil || lease.Token != 1 {
		t.Fatalf("Acquire = %+v, %v; want token 1", lease, err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM app_locks WHERE key = 'k' AND token = 1`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the row in app_locks: %d, %v", n, err)
	}
	var got *sql.DB
	if !l.As(&got) || got != db {
		t.Errorf("As(**sql.DB) = %p; want the database given to New", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err != nil {
		t.Errorf("Close closed the program's database: %v", err)
	}
}

// TestNewRefuses: impossible options get fence.ErrInvalid.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	db := new(sql.DB)
	for _, tc := range []struct {
		name string
		db   *sql.DB
		opts *sqlite.Options
	}{
		{"nil db", nil, nil},
		{"quoted table", db, &sqlite.Options{Table: `a"b`}},
		{"table with a dot", db, &sqlite.Options{Table: "main.locks"}},
		{"table from a digit", db, &sqlite.Options{Table: "1locks"}},
		{"negative poll", db, &sqlite.Options{PollInterval: -time.Second}},
	} {
		if _, err := sqlite.New(tc.db, tc.opts); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s: New = %v; want fence.ErrInvalid", tc.name, err)
		}
	}
}

// TestContextEndsABusyWait: a call waiting for another connection's write
// lock returns once its context ends, with an error that says so, and
// wrote nothing.
func TestContextEndsABusyWait(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	l := open(t, url, nil)
	var db *sql.DB
	if !l.As(&db) {
		t.Fatal("As(**sql.DB) = false")
	}
	// Another database on the file holds its write lock.
	other := open(t, url, nil)
	var odb *sql.DB
	other.As(&odb)
	conn, err := odb.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = l.Acquire(ctx, "k", time.Minute, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire while another writer holds the lock = %v; want context.DeadlineExceeded", err)
	}
	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if info, err := l.Inspect(t.Context(), "k"); err != nil || info.Token != 0 {
		t.Errorf("after the cut-off Acquire, Inspect = %+v, %v; want never acquired", info, err)
	}
}
