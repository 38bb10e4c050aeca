package sqlite_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestOpenURL: the URL forms open a file, made when missing, in WAL mode
// with every commit synced, with the lease table in it, which the
// Locker's Close closes.
func TestOpenURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ url, file, table string }{
		{"sqlite://" + filepath.ToSlash(dir) + "/a.db", "a.db", "fence_locks"},
		{"sqlite://" + filepath.ToSlash(dir) + "/b.db?table=jobs&busy-timeout=2s", "b.db", "jobs"},
		{"sqlite://" + filepath.ToSlash(dir) + "/odd%3F%23%25name.db", "odd?#%name.db", "fence_locks"},
	} {
		l := open(t, tc.url, nil)
		if _, err := os.Stat(filepath.Join(dir, tc.file)); err != nil {
			t.Errorf("open %s: %v", tc.url, err)
		}
		var db *sql.DB
		if !l.As(&db) {
			t.Fatalf("open %s: As(**sql.DB) = false", tc.url)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, tc.table).Scan(&n); err != nil || n != 1 {
			t.Errorf("open %s: table %s: %d, %v", tc.url, tc.table, n, err)
		}
		// Tokens are durable: WAL mode, each commit synced (FULL).
		var mode string
		var sync int
		if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("open %s: journal_mode %q, %v; want wal", tc.url, mode, err)
		}
		if err := db.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil || sync != 2 {
			t.Errorf("open %s: synchronous %d, %v; want 2 (FULL)", tc.url, sync, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := db.Ping(); err == nil {
			t.Errorf("open %s: Close left the database open", tc.url)
		}
	}
}

// TestOpenRelativeURL: sqlite://rel/path.db names a file relative to the
// working directory, as the SQL resource's URLs do.
func TestOpenRelativeURL(t *testing.T) {
	t.Chdir(t.TempDir())
	l := open(t, "sqlite://locks.db", nil)
	if _, err := l.Acquire(t.Context(), "k", time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("locks.db"); err != nil {
		t.Error(err)
	}
}

func TestOpenURLRefuses(t *testing.T) {
	t.Parallel()
	dir := filepath.ToSlash(t.TempDir())
	for _, tc := range []struct{ raw, want string }{
		{"sqlite://", "no file"},
		{"sqlite:///", "no file"},
		{"sqlite:///tmp/", "no file"},
		{"sqlite://u:secret@x.db", "no user or password"},
		{"sqlite://x.db:4", "no port"},
		{"sqlite:///x.db?busy-timeout=soon", "not a duration"},
		{"sqlite:///x.db?fence-table=f", `unknown parameter "fence-table"`},
		{"sqlite:///x.db?table=a.b", "letters, digits and underscores"},
		{"sqlite:///x%00.db", "NUL"},
		{"sqlite:///x.db#frag", "sqlite:///abs/path.db"},
	} {
		_, err := fence.OpenLocker(t.Context(), tc.raw, nil)
		if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("open %s = %v; want fence.ErrInvalid saying %q", tc.raw, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("open %s = %v shows the password", tc.raw, err)
		}
	}
	// A file that cannot be made is a store error naming the file.
	missing := "sqlite://" + dir + "/no/such/dir/locks.db"
	_, err := fence.OpenLocker(t.Context(), missing, nil)
	if err == nil || errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), dir+"/no/such/dir/locks.db") {
		t.Errorf("open %s = %v; want an error naming the file", missing, err)
	}
}
