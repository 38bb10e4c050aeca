package mysql

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// usedBy returns IS_USED_LOCK(name) asked on db: the holding session's
// id, or 0 when the lock is free.
func usedBy(t *testing.T, db *sql.DB, name string) int64 {
	t.Helper()
	var id sql.NullInt64
	if err := db.QueryRowContext(t.Context(), "SELECT IS_USED_LOCK(?)", name).Scan(&id); err != nil {
		t.Fatalf("IS_USED_LOCK: %v", err)
	}
	return id.Int64
}

// eventuallyFree waits up to 10 s for the lock to be free as seen from db
// (the server frees a closed session's locks as it notices the close).
func eventuallyFree(t *testing.T, db *sql.DB, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for usedBy(t, db, name) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("lock %q still held by session %d", name, usedBy(t, db, name))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConnCloseKeepsGetLock shows the trap ConnLock avoids: GET_LOCK on a
// *sql.Conn, then Conn.Close, leaves the lock held by the session now idle
// in the pool.
func TestConnCloseKeepsGetLock(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, other := newDB(t, 1), newDB(t, 1)
	name := uniqueName("trap-")
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got, id int64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0), CONNECTION_ID()", name).Scan(&got, &id); err != nil || got != 1 {
		t.Fatalf("GET_LOCK = %d, %v", got, err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if holder := usedBy(t, other, name); holder != id {
		t.Fatalf("after Conn.Close, IS_USED_LOCK = %d; the trap is gone? (session was %d)", holder, id)
	}
	// The next user of the pool inherits the lock.
	var again sql.NullBool
	if err := db.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", name).Scan(&again); err != nil || !again.Bool {
		t.Errorf("a later query of the pool does not run on the holding session: %v, %v", again, err)
	}
}

// TestConnLockReleaseFrees takes a lock, shows another session refused
// while it is held, and free after Release, with the connection back in
// the pool holding nothing.
func TestConnLockReleaseFrees(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, other := newDB(t, 1), newDB(t, 2)
	name := uniqueName("lock-")
	l, err := GetLock(ctx, db, name, 0)
	if err != nil {
		t.Fatalf("GetLock: %v", err)
	}
	if holder := usedBy(t, other, name); holder != l.ConnectionID() {
		t.Errorf("IS_USED_LOCK = %d, want %d", holder, l.ConnectionID())
	}
	_, err = GetLock(ctx, other, name, 0)
	var held *fence.HeldError
	if !errors.As(err, &held) || held.Key != name || held.Owner == "" {
		t.Errorf("GetLock of a held lock = %v, want a *fence.HeldError naming the holder", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if holder := usedBy(t, other, name); holder != 0 {
		t.Errorf("after Release, IS_USED_LOCK = %d, want free", holder)
	}
	select {
	case <-l.Done():
	default:
		t.Error("Done is open after Release")
	}
	if !errors.Is(l.Err(), fence.ErrReleased) {
		t.Errorf("Err = %v, want ErrReleased", l.Err())
	}
	// The pool's one connection is the one that held the lock, back
	// in the pool: it holds nothing.
	var id int64
	if err := db.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil || id != l.ConnectionID() {
		t.Logf("the pool's connection is %d (%v), not the lock's %d", id, err, l.ConnectionID())
	}
	if err := l.Release(ctx); err != nil {
		t.Errorf("a second Release: %v", err)
	}
}

// TestConnLockFailedReleaseDiscards releases with a context that has
// ended, so RELEASE_LOCK is never answered: the connection is closed, not
// pooled, and the server frees the lock.
func TestConnLockFailedReleaseDiscards(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, other := newDB(t, 1), newDB(t, 1)
	name := uniqueName("fail-")
	l, err := GetLock(ctx, db, name, 0)
	if err != nil {
		t.Fatalf("GetLock: %v", err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.Release(ended); err == nil {
		t.Fatal("Release with an ended context succeeded")
	}
	eventuallyFree(t, other, name)
	var id int64
	if err := db.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil || id == l.ConnectionID() {
		t.Errorf("the pool reuses the lock's session %d (%v): it was not discarded", id, err)
	}
}

// TestConnLockLostWhenKilled kills the lock's session from another one:
// Done closes, Err matches ErrLeaseLost, Release says not held, and the
// lock is free.
func TestConnLockLostWhenKilled(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, other := newDB(t, 1), newDB(t, 1)
	name := uniqueName("kill-")
	l, err := GetLock(ctx, db, name, 0)
	if err != nil {
		t.Fatalf("GetLock: %v", err)
	}
	mustExec(t, other, "KILL CONNECTION ?", l.ConnectionID())
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done still open 10 s after the lock's session was killed")
	}
	if !errors.Is(l.Err(), fence.ErrLeaseLost) {
		t.Errorf("Err = %v, want ErrLeaseLost", l.Err())
	}
	if err := l.Release(ctx); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("Release of a lost lock = %v, want ErrNotHeld", err)
	}
	eventuallyFree(t, other, name)
}

// TestGetLockWaits waits for a held lock and gets it when its holder
// releases; a waiter whose context ends first leaves no lock behind.
func TestGetLockWaits(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, other := newDB(t, 3), newDB(t, 1)
	name := uniqueName("wait-")
	first, err := GetLock(ctx, db, name, 0)
	if err != nil {
		t.Fatalf("GetLock: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := GetLock(short, db, name, 10*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GetLock past its context = %v, want DeadlineExceeded", err)
	}
	got := make(chan error, 1)
	go func() {
		second, err := GetLock(ctx, db, name, 10*time.Second)
		if err == nil {
			err = second.Release(ctx)
		}
		got <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if err := first.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("the waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not get the lock 5 s after its release")
	}
	eventuallyFree(t, other, name)
}

func TestGetLockInput(t *testing.T) {
	t.Parallel()
	db := newDB(t, 1)
	for _, tt := range []struct {
		name string
		wait time.Duration
	}{
		{"", 0}, {string(make([]byte, 65)), 0}, {"\xff", 0}, {"ok", -time.Second}, {"ok", MaxLockWait + 1},
	} {
		if _, err := GetLock(t.Context(), db, tt.name, tt.wait); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("GetLock(%q, %v) = %v, want ErrInvalid", tt.name, tt.wait, err)
		}
	}
}
