package mysql

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/mysqltest"
	"github.com/fencekit/fence/lockers/lockertest"
)

// lockRow holds an InnoDB lock on key's row of table in a transaction of
// its own until the returned function rolls it back, so that a statement
// of the locker on that row waits.
func lockRow(t *testing.T, db *sql.DB, table, key string) (unlock func()) {
	t.Helper()
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var token int64
	if err := tx.QueryRowContext(t.Context(), "SELECT token FROM "+table+" WHERE `key` = ? FOR UPDATE", key).Scan(&token); err != nil {
		t.Fatalf("lock the row: %v", err)
	}
	return func() { _ = tx.Rollback() }
}

// killWhenWaiting kills the session that runs a statement starting with
// prefix as soon as the process list shows it, and reports the error.
func killWhenWaiting(ctx context.Context, db *sql.DB, prefix string) error {
	for ctx.Err() == nil {
		var id int64
		err := db.QueryRowContext(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND ID <> CONNECTION_ID() LIMIT 1", prefix+"%").Scan(&id)
		if err == nil {
			_, err = db.ExecContext(ctx, "KILL CONNECTION ?", id)
			return err
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return ctx.Err()
}

// TestConnectionKilledMidCall kills the locker's session while its
// statement waits for a row lock (KILL CONNECTION from another session):
// the call returns a *ConnLostError matching ErrUnknownOutcome (for
// writes), the row is as before, and the next call works on a new
// connection. A job renewing every TTL/5 keeps its lease for several
// TTLs while its connection is killed before each renewal.
func TestConnectionKilledMidCall(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, admin := newDB(t, 4), newDB(t, 2)
	l := newTable(t, db)
	table := l.quotedTable()
	const ttl = 2 * time.Second
	lease, err := l.Acquire(ctx, "k", ttl, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		op, prefix string
		call       func() error
	}{
		{"renew", "UPDATE " + table, func() error { _, err := l.Renew(ctx, lease); return err }},
		{"acquire", "INSERT INTO " + table, func() error { _, err := l.Acquire(ctx, "k", ttl, nil); return err }},
		{"release", "UPDATE " + table, func() error { return l.Release(ctx, lease) }},
	} {
		unlock := lockRow(t, admin, table, "k")
		killed := make(chan error, 1)
		go func() { killed <- killWhenWaiting(ctx, admin, tt.prefix) }()
		err := tt.call()
		if kerr := <-killed; kerr != nil {
			t.Fatalf("%s: kill: %v", tt.op, kerr)
		}
		unlock()
		var lost *ConnLostError
		if !errors.As(err, &lost) || !errors.Is(err, fence.ErrUnknownOutcome) || lost.Op != tt.op {
			t.Fatalf("%s killed mid-call = %v, want a *ConnLostError for %s matching ErrUnknownOutcome", tt.op, err, tt.op)
		}
		info, err := l.Inspect(ctx, "k")
		if err != nil || !info.Held || info.Token != lease.Token || info.Owner != lease.Owner {
			t.Fatalf("after the killed %s: Inspect = %+v, %v; want the lease as before", tt.op, info, err)
		}
		// Repeat after an ambiguous outcome: renew is idempotent.
		if lease, err = l.Renew(ctx, lease); err != nil {
			t.Fatalf("Renew after the killed %s: %v", tt.op, err)
		}
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
	// A job that outlives several TTLs while its idle connection is
	// killed under it before each renewal: database/sql finds the
	// connection dead before sending and retries on a fresh one. Its
	// pool has one connection, so that the test kills its own sessions
	// only (the server is shared).
	jobDB := newDB(t, 1)
	job, err := New(jobDB, &Options{Table: table[1 : len(table)-1]})
	if err != nil {
		t.Fatal(err)
	}
	lease, err = job.Acquire(ctx, "job", ttl, nil)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(3 * ttl)
	kills := 0
	for time.Now().Before(end) {
		var id int64
		if err := jobDB.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		mustExec(t, admin, "KILL CONNECTION ?", id)
		kills++
		renewed, err := job.Renew(ctx, lease)
		if errors.Is(err, fence.ErrUnknownOutcome) {
			renewed, err = job.Renew(ctx, lease) // repeat an ambiguous renewal
		}
		if err != nil {
			t.Fatalf("Renew of a job %v before its end, after %d kills: %v", time.Until(end), kills, err)
		}
		lease = renewed
		time.Sleep(ttl / 5)
	}
	if err := job.Release(ctx, lease); err != nil {
		t.Fatalf("Release after the job: %v", err)
	}
}

// TestLockWaitTimeoutRetried makes the locker's statement wait longer
// than innodb_lock_wait_timeout (1 s) for a row another transaction
// locks: it is tried three times, then fails with a *ContentionError for
// 1205 and changes nothing; when the other transaction ends during the
// retries, the call succeeds.
func TestLockWaitTimeoutRetried(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, admin := newDB(t, 2, "innodb_lock_wait_timeout=1"), newDB(t, 2)
	l := newTable(t, db)
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	unlock := lockRow(t, admin, l.quotedTable(), "k")
	_, err = l.Renew(ctx, lease)
	var ce *ContentionError
	if !errors.As(err, &ce) || ce.Number != 1205 || ce.Tries != 3 || errors.Is(err, fence.ErrUnknownOutcome) {
		t.Fatalf("Renew behind a row lock = %v, want a *ContentionError for 1205 after 3 tries", err)
	}
	unlock()
	unlock = lockRow(t, admin, l.quotedTable(), "k")
	time.AfterFunc(1500*time.Millisecond, unlock)
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release retried past the row lock: %v", err)
	}
	info, err := l.Inspect(ctx, "k")
	if err != nil || info.Held || info.Token != lease.Token {
		t.Fatalf("Inspect = %+v, %v; want free with token %d", info, err, lease.Token)
	}
}

// TestConformanceRestart runs the suite on a private server, whose
// Restart case restarts it.
func TestConformanceRestart(t *testing.T) {
	t.Parallel()
	s := mysqltest.Start(t)
	db := openDSN(t, s.DSN(), contenders+2)
	h := harness(t, db, false)
	h.Restart = func(t *testing.T) { s.Restart(t) }
	lockertest.Run(t, h)
}

// TestServerCrash kills the server with SIGKILL while a lease is held and
// restarts it: the lease is still held (its row was committed) and
// renewable, the key's next token is higher after a release and after a
// Break, and a lease that expired is taken with a higher token.
func TestServerCrash(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := mysqltest.Start(t)
	db := openDSN(t, s.DSN(), 4)
	l := newLockerOn(t, db, "fence_locks")
	lease, err := l.Acquire(ctx, "k", 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	short, err := l.Acquire(ctx, "short", shortTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Kill(t)
	if _, err := l.Renew(ctx, lease); err == nil {
		t.Fatal("Renew on a killed server succeeded")
	}
	s.Restart(t)
	if lease, err = l.Renew(ctx, lease); err != nil {
		t.Fatalf("Renew after the crash: %v", err)
	}
	if _, err := l.Acquire(ctx, "k", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Acquire of the held key after the crash = %v, want ErrHeld", err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	next, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil || next.Token <= lease.Token {
		t.Fatalf("Acquire after release = %v, %v; want a token above %d", next.Token, err, lease.Token)
	}
	if err := l.Break(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	s.Kill(t)
	s.Restart(t)
	after, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil || after.Token <= next.Token {
		t.Fatalf("Acquire after a Break and a crash = %v, %v; want a token above %d", after.Token, err, next.Token)
	}
	// The short lease runs out on the server's clock, which the restarts
	// did not stop: wait for its end rather than count on the restarts
	// lasting longer (on a fast machine they do not).
	time.Sleep(time.Until(short.ValidUntil))
	taken, err := l.Acquire(ctx, "short", time.Minute, nil)
	for deadline := time.Now().Add(5 * time.Second); errors.Is(err, fence.ErrHeld) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // the server's expiry is a little after ours
		taken, err = l.Acquire(ctx, "short", time.Minute, nil)
	}
	if err != nil || taken.Token <= short.Token {
		t.Fatalf("Acquire of the expired key = %v, %v; want a token above %d", taken.Token, err, short.Token)
	}
}
