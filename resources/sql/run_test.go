package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	memlock "github.com/fencekit/fence/lockers/memory"
	"github.com/fencekit/fence/lockers/postgres"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// txFunc is the work of a fenced transaction, on either driver family.
type txFunc func(ctx context.Context, x txn) error

// lockedEnv is one database and driver family with what the one-call
// fenced transactions need: a locker, a fence table and an accounts table
// with the account "alice" at balance 0.
type lockedEnv struct {
	name     string
	locker   fence.Locker
	fences   *fencesql.Fences
	accounts string // quoted
	// locked runs fn through Locked or LockedPgx on the env's database;
	// run through Run or RunPgx.
	locked func(ctx context.Context, sess *fence.Session, key string, fn txFunc, opts *fencesql.RunOptions) error
	run    func(ctx context.Context, h *fence.Handle, fn txFunc, opts *fencesql.RunOptions) error
	// lossyLocked is locked on connections of their own whose first COMMIT
	// is applied but loses its answer.
	lossyLocked func(t *testing.T) func(ctx context.Context, sess *fence.Session, key string, fn txFunc, opts *fencesql.RunOptions) error
	// balance reads alice's balance.
	balance func(ctx context.Context) (int64, error)
}

// credit returns the work that adds amount to alice's balance.
func (e *lockedEnv) credit(amount int64) txFunc {
	return func(ctx context.Context, x txn) error {
		return x.exec(`UPDATE `+e.accounts+` SET balance = balance + $1 WHERE id = 'alice'`, amount)
	}
}

// wantBalance fails unless alice's balance is want.
func (e *lockedEnv) wantBalance(t *testing.T, want int64) {
	t.Helper()
	got, err := e.balance(context.Background())
	if err != nil || got != want {
		t.Fatalf("balance = %d, %v; want %d", got, err, want)
	}
}

// session returns a session on the env's locker with a TTL of ttl.
func (e *lockedEnv) session(t *testing.T, ttl time.Duration) *fence.Session {
	t.Helper()
	s, err := fence.NewSession(e.locker, &fence.SessionOptions{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// wantFree fails unless key is free on the env's locker.
func (e *lockedEnv) wantFree(t *testing.T, key string) {
	t.Helper()
	info, err := e.locker.Inspect(context.Background(), key)
	if err != nil || info.Held {
		t.Fatalf("Inspect(%q) = %+v, %v; want the key free", key, info, err)
	}
}

// lockedKinds are the databases and driver families of the one-call
// fenced transactions: pgx and database/sql on PostgreSQL, with the
// PostgreSQL locker, and SQLite and MySQL (database/sql) with the
// in-memory locker.
var lockedKinds = []struct {
	name string
	open func(t *testing.T) *lockedEnv
}{
	{"postgres-pgx", openPgxEnv},
	{"postgres-stdlib", openStdEnv},
	{"sqlite", openSQLiteEnv},
	{"mysql", openMySQLEnv},
}

// onEachLockedEnv runs fn in a parallel subtest per kind.
func onEachLockedEnv(t *testing.T, fn func(t *testing.T, e *lockedEnv)) {
	t.Helper()
	for _, k := range lockedKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			fn(t, k.open(t))
		})
	}
}

// pgLocker returns a PostgreSQL locker on a lease table of its own,
// dropped when the test ends.
func pgLocker(t testing.TB, pool *pgxpool.Pool) *postgres.Locker {
	t.Helper()
	table := uniqueName("locks")
	l, err := postgres.New(pool, &postgres.Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), fmt.Sprintf(`DROP TABLE IF EXISTS %q`, table)) })
	return l
}

// newAccounts creates the fence table and the accounts table through
// exec, and fills in e's names; on PostgreSQL drop drops them later.
func newAccounts(t testing.TB, e *lockedEnv, d fencesql.Dialect, exec func(ctx context.Context, stmt string) error, drop bool) {
	t.Helper()
	ctx := t.Context()
	tb := fencesql.Tables{Fence: uniqueName("fence"), Value: uniqueName("value")}
	stmts, err := fencesql.SchemaSQL(d, tb)
	if err != nil {
		t.Fatal(err)
	}
	accounts := uniqueName("accounts")
	e.accounts = fmt.Sprintf("%q", accounts)
	stmts = append(stmts,
		`CREATE TABLE `+e.accounts+` (id text PRIMARY KEY, balance bigint NOT NULL)`,
		`INSERT INTO `+e.accounts+` (id, balance) VALUES ('alice', 0)`)
	for _, s := range stmts {
		if err := exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if drop {
		t.Cleanup(func() {
			for _, tbl := range []string{tb.Fence, tb.Value, accounts} {
				_ = exec(context.Background(), fmt.Sprintf(`DROP TABLE IF EXISTS %q`, tbl))
			}
		})
	}
	if e.fences, err = fencesql.NewFencesFor(d, tb.Fence); err != nil {
		t.Fatal(err)
	}
}

// pgxLocked returns locked for pgx on db.
func pgxLocked(e *lockedEnv, db fencesql.PgxBatcher) func(ctx context.Context, sess *fence.Session, key string, fn txFunc, opts *fencesql.RunOptions) error {
	return func(ctx context.Context, sess *fence.Session, key string, fn txFunc, opts *fencesql.RunOptions) error {
		return e.fences.LockedPgx(ctx, sess, db, key, func(ctx context.Context, tx pgx.Tx) error { return fn(ctx, pgxTxn{ctx, tx}) }, opts)
	}
}

// stdLocked returns locked for database/sql on db.
func stdLocked(e *lockedEnv, db *sql.DB) func(ctx context.Context, sess *fence.Session, key string, fn txFunc, opts *fencesql.RunOptions) error {
	return func(ctx context.Context, sess *fence.Session, key string, fn txFunc, opts *fencesql.RunOptions) error {
		return e.fences.Locked(ctx, sess, db, key, func(ctx context.Context, tx *sql.Tx) error { return fn(ctx, stdTxn{ctx, tx}) }, opts)
	}
}

func openPgxEnv(t *testing.T) *lockedEnv {
	pool := openPgPool(t, 8, nil)
	e := &lockedEnv{name: "postgres-pgx", locker: pgLocker(t, pool)}
	newAccounts(t, e, fencesql.PostgreSQL, func(ctx context.Context, s string) error {
		_, err := pool.Exec(ctx, s)
		return err
	}, true)
	e.locked = pgxLocked(e, pool)
	e.run = func(ctx context.Context, h *fence.Handle, fn txFunc, opts *fencesql.RunOptions) error {
		return e.fences.RunPgx(ctx, h, pool, func(ctx context.Context, tx pgx.Tx) error { return fn(ctx, pgxTxn{ctx, tx}) }, opts)
	}
	e.lossyLocked = func(t *testing.T) func(context.Context, *fence.Session, string, txFunc, *fencesql.RunOptions) error {
		cfg, err := pgxpool.ParseConfig(testenv.PostgresURL(t))
		if err != nil {
			t.Fatal(err)
		}
		cfg.ConnConfig.DialFunc = lossyDial(t, func() {})
		lossy, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(lossy.Close)
		return pgxLocked(e, lossy)
	}
	e.balance = func(ctx context.Context) (b int64, err error) {
		err = pool.QueryRow(ctx, `SELECT balance FROM `+e.accounts+` WHERE id = 'alice'`).Scan(&b)
		return b, err
	}
	return e
}

// openStd returns the std-family parts of an env on db.
func openStd(e *lockedEnv, db *sql.DB) {
	e.locked = stdLocked(e, db)
	e.run = func(ctx context.Context, h *fence.Handle, fn txFunc, opts *fencesql.RunOptions) error {
		return e.fences.Run(ctx, h, db, func(ctx context.Context, tx *sql.Tx) error { return fn(ctx, stdTxn{ctx, tx}) }, opts)
	}
	e.balance = func(ctx context.Context) (b int64, err error) {
		err = db.QueryRowContext(ctx, `SELECT balance FROM `+e.accounts+` WHERE id = 'alice'`).Scan(&b)
		return b, err
	}
}

func openStdEnv(t *testing.T) *lockedEnv {
	db := openPgStd(t, 8)
	e := &lockedEnv{name: "postgres-stdlib", locker: pgLocker(t, openPgPool(t, 4, nil))}
	newAccounts(t, e, fencesql.PostgreSQL, func(ctx context.Context, s string) error {
		_, err := db.ExecContext(ctx, s)
		return err
	}, true)
	openStd(e, db)
	e.lossyLocked = func(t *testing.T) func(context.Context, *fence.Session, string, txFunc, *fencesql.RunOptions) error {
		cfg, err := pgx.ParseConfig(testenv.PostgresURL(t))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DialFunc = lossyDial(t, func() {})
		lossy := stdlib.OpenDB(*cfg)
		t.Cleanup(func() { _ = lossy.Close() })
		return stdLocked(e, lossy)
	}
	return e
}

func openSQLiteEnv(t *testing.T) *lockedEnv {
	dsn := sqliteDSN(t)
	db := openSQLiteDSN(t, dsn)
	e := &lockedEnv{name: "sqlite", locker: memlock.New(nil)}
	newAccounts(t, e, fencesql.SQLite, func(ctx context.Context, s string) error {
		_, err := db.ExecContext(ctx, s)
		return err
	}, false)
	openStd(e, db)
	e.lossyLocked = func(t *testing.T) func(context.Context, *fence.Session, string, txFunc, *fencesql.RunOptions) error {
		return stdLocked(e, lostSQLiteDB(t, dsn, func() {}))
	}
	return e
}

// TestLockedCommits: the one-call transaction takes the lock, passes the
// fence with the lease's token, commits and releases.
func TestLockedCommits(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		sess := e.session(t, time.Minute)
		var token fence.Token
		err := e.locked(ctx, sess, "account:alice", func(ctx context.Context, x txn) error {
			h, err := x.highest(e.fences, "account:alice")
			token = h
			if err != nil {
				return err
			}
			return e.credit(25)(ctx, x)
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		e.wantBalance(t, 25)
		if !token.Valid() {
			t.Fatal("the fence row held no token inside the transaction: the fence did not run first")
		}
		info, err := e.locker.Inspect(ctx, "account:alice")
		if err != nil || info.Held || info.Token != token {
			t.Fatalf("Inspect = %+v, %v; want the key free, last token %d (the fence's)", info, err, token)
		}
		// A name under the key gets a fence row of its own.
		if err := e.locked(ctx, sess, "account:alice", e.credit(5), &fencesql.RunOptions{Name: "account:alice/credit"}); err != nil {
			t.Fatal(err)
		}
		e.wantBalance(t, 30)
		e.wantFree(t, "account:alice")
	})
}

// TestLockedBusyKey: while another owner holds the key, the one-call
// transaction returns ErrHeld and runs nothing; with AcquireTimeout it
// waits for the release.
func TestLockedBusyKey(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		holder, err := e.session(t, time.Minute).Lock(ctx, "account:alice", nil)
		if err != nil {
			t.Fatal(err)
		}
		ran := false
		err = e.locked(ctx, e.session(t, time.Minute), "account:alice", func(context.Context, txn) error {
			ran = true
			return nil
		}, nil)
		if !errors.Is(err, fence.ErrHeld) || ran {
			t.Fatalf("on a busy key: %v, fn ran: %v; want ErrHeld and fn not run", err, ran)
		}
		errc := make(chan error, 1)
		go func() {
			errc <- e.locked(ctx, e.session(t, time.Minute), "account:alice", e.credit(1), &fencesql.RunOptions{AcquireTimeout: time.Minute})
		}()
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("waiting for the key: %v", err)
		}
		e.wantBalance(t, 1)
	})
}

// TestLockedOutlivesTTL: a job of three TTLs commits; the session renews
// its lease meanwhile.
func TestLockedOutlivesTTL(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		err := e.locked(ctx, e.session(t, time.Second), "account:alice", func(ctx context.Context, x txn) error {
			select {
			case <-ctx.Done():
				return fmt.Errorf("cancelled during the job: %w", context.Cause(ctx))
			case <-time.After(3 * time.Second):
			}
			return e.credit(7)(ctx, x)
		}, nil)
		if err != nil {
			t.Fatalf("a 3 s job under a 1 s TTL: %v", err)
		}
		e.wantBalance(t, 7)
		e.wantFree(t, "account:alice")
	})
}

// TestLockedLeaseLost: an operator breaks the lock while the transaction
// runs; the next renewal finds the lease gone, fn's context is cancelled
// with the loss, the transaction rolls back and the error matches
// ErrLeaseLost.
func TestLockedLeaseLost(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		var cause error
		err := e.locked(ctx, e.session(t, time.Second), "account:alice", func(ctx context.Context, x txn) error {
			if err := e.credit(100)(ctx, x); err != nil {
				return err
			}
			if err := e.locker.Break(context.Background(), "account:alice"); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				cause = context.Cause(ctx)
			case <-time.After(10 * time.Second):
				return errors.New("fn's context was not cancelled 10 s after the lock was broken")
			}
			return e.credit(1)(ctx, x)
		}, nil)
		if !errors.Is(err, fence.ErrLeaseLost) {
			t.Fatalf("lease lost mid-transaction: %v; want ErrLeaseLost", err)
		}
		if errors.Is(err, fence.ErrUnknownOutcome) || errors.Is(err, fence.ErrStaleToken) {
			t.Fatalf("lease lost mid-transaction: %v; want ErrLeaseLost only", err)
		}
		if !errors.Is(cause, fence.ErrLeaseLost) {
			t.Fatalf("fn's context cause = %v; want ErrLeaseLost", cause)
		}
		e.wantBalance(t, 0)
	})
}

// TestRunStaleHolderRefused: a holder whose lock was broken and taken by
// a newer holder, and which has not noticed yet, runs its transaction: the
// fence refuses its token first, nothing of fn runs, and the newer
// holder's write stands.
func TestRunStaleHolderRefused(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		old, err := e.session(t, time.Minute).Lock(ctx, "account:alice", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.run(ctx, old, e.credit(1), nil); err != nil {
			t.Fatal(err)
		}
		if err := e.locker.Break(ctx, "account:alice"); err != nil {
			t.Fatal(err)
		}
		newer, err := e.session(t, time.Minute).Lock(ctx, "account:alice", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.run(ctx, newer, e.credit(10), nil); err != nil {
			t.Fatal(err)
		}
		ran := false
		err = e.run(ctx, old, func(ctx context.Context, x txn) error {
			ran = true
			return e.credit(1000)(ctx, x)
		}, nil)
		wantStale(t, err, old.Token(), newer.Token())
		if ran {
			t.Fatal("fn ran after the fence refused the token")
		}
		e.wantBalance(t, 11)
	})
}

// TestLockedFnError: fn's error rolls the transaction back and comes back
// as it is; the lock is released.
func TestLockedFnError(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		errBoom := errors.New("boom")
		err := e.locked(ctx, e.session(t, time.Minute), "account:alice", func(ctx context.Context, x txn) error {
			if err := e.credit(50)(ctx, x); err != nil {
				return err
			}
			return errBoom
		}, nil)
		if err != errBoom {
			t.Fatalf("err = %v; want fn's error unchanged", err)
		}
		e.wantBalance(t, 0)
		e.wantFree(t, "account:alice")
	})
}

// TestLockedPanic: a panic in fn rolls back, releases the lock and goes
// on.
func TestLockedPanic(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Fatalf("recovered %v; want fn's panic", r)
				}
			}()
			_ = e.locked(ctx, e.session(t, time.Minute), "account:alice", func(ctx context.Context, x txn) error {
				if err := e.credit(50)(ctx, x); err != nil {
					return err
				}
				panic("boom")
			}, nil)
		}()
		e.wantBalance(t, 0)
		e.wantFree(t, "account:alice")
	})
}

// TestLockedCommitAnswerLost: the database applies the COMMIT but its
// answer is lost: the error matches ErrUnknownOutcome (the write may have
// been applied, and here was), never ErrLeaseLost or ErrStaleToken.
func TestLockedCommitAnswerLost(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		locked := e.lossyLocked(t)
		err := locked(t.Context(), e.session(t, time.Minute), "account:alice", e.credit(3), nil)
		if !errors.Is(err, fence.ErrUnknownOutcome) || errors.Is(err, fence.ErrLeaseLost) || errors.Is(err, fence.ErrStaleToken) {
			t.Fatalf("COMMIT answer lost: %v; want ErrUnknownOutcome only", err)
		}
		e.wantBalance(t, 3)
	})
}

// TestLockedRefusesBadInput: invalid arguments get ErrInvalid before any
// lock is taken.
func TestLockedRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := openPgxEnv(t)
	ctx := t.Context()
	sess := e.session(t, time.Minute)
	pool := openPgPool(t, 2, nil)
	fn := func(context.Context, pgx.Tx) error { return nil }
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var nilFences *fencesql.Fences
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"nil fences", func() error { return nilFences.LockedPgx(ctx, sess, pool, "k", fn, nil) }},
		{"nil session", func() error { return e.fences.LockedPgx(ctx, nil, pool, "k", fn, nil) }},
		{"nil db", func() error { return e.fences.LockedPgx(ctx, sess, nil, "k", fn, nil) }},
		{"a transaction as db", func() error { return e.fences.LockedPgx(ctx, sess, tx, "k", fn, nil) }},
		{"nil fn", func() error { return e.fences.LockedPgx(ctx, sess, pool, "k", nil, nil) }},
		{"empty key", func() error { return e.fences.LockedPgx(ctx, sess, pool, "", fn, nil) }},
		{"a name not under the key", func() error {
			return e.fences.LockedPgx(ctx, sess, pool, "k", fn, &fencesql.RunOptions{Name: "other"})
		}},
		{"negative AcquireTimeout", func() error {
			return e.fences.LockedPgx(ctx, sess, pool, "k", fn, &fencesql.RunOptions{AcquireTimeout: -1})
		}},
		{"database/sql: nil db", func() error {
			return e.fences.Locked(ctx, sess, nil, "k", func(context.Context, *sql.Tx) error { return nil }, nil)
		}},
		{"database/sql: nil fn", func() error { return e.fences.Locked(ctx, sess, openPgStd(t, 1), "k", nil, nil) }},
		{"RunPgx: nil handle", func() error { return e.fences.RunPgx(ctx, nil, pool, fn, nil) }},
	} {
		err := tc.call()
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s: %v; want ErrInvalid", tc.name, err)
		} else if !strings.HasPrefix(err.Error(), "fence/sql: transaction") {
			t.Errorf("%s: %q; want it to start with %q", tc.name, err, "fence/sql: transaction")
		}
	}
	e.wantFree(t, "k")

	// A handle already released is refused without a transaction.
	h, err := sess.Lock(ctx, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = h.Release(ctx)
	ran := false
	if err := e.fences.RunPgx(ctx, h, pool, func(context.Context, pgx.Tx) error { ran = true; return nil }, nil); !errors.Is(err, fence.ErrReleased) || ran {
		t.Fatalf("RunPgx with a released handle: %v, fn ran: %v; want ErrReleased, fn not run", err, ran)
	}
}

// TestLockedPgxRetriesConflicts: under REPEATABLE READ, a transaction
// that updates a row a concurrent one changed fails with a serialization
// failure; LockedPgx runs it again, fence included, and it commits.
func TestLockedPgxRetriesConflicts(t *testing.T) {
	t.Parallel()
	e := openPgxEnv(t)
	ctx := t.Context()
	pool := openPgPool(t, 2, nil)  // the two transactions
	watch := openPgPool(t, 1, nil) // the look at the second's wait
	rr := &fencesql.RunOptions{PgxTxOptions: pgx.TxOptions{IsoLevel: pgx.RepeatableRead}}
	firstIn, firstGo := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- e.fences.LockedPgx(ctx, e.session(t, time.Minute), pool, "first", func(ctx context.Context, tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE `+e.accounts+` SET balance = balance + 1 WHERE id = 'alice'`); err != nil {
				return err
			}
			close(firstIn)
			<-firstGo
			return nil
		}, rr)
	}()
	<-firstIn
	var attempts atomic.Int32
	secondc := make(chan error, 1)
	go func() {
		secondc <- e.fences.LockedPgx(ctx, e.session(t, time.Minute), pool, "second", func(ctx context.Context, tx pgx.Tx) error {
			attempts.Add(1)
			_, err := tx.Exec(ctx, `UPDATE `+e.accounts+` SET balance = balance + 10 WHERE id = 'alice'`)
			return err
		}, rr)
	}()
	// Let the first commit once the second waits for its row lock.
	for waiting := 0; waiting == 0; {
		select {
		case err := <-secondc:
			t.Fatalf("the second transaction ended before it waited for the first: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%balance + 10%'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	close(firstGo)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := <-secondc; err != nil {
		t.Fatalf("the conflicting transaction: %v; want it retried and committed", err)
	}
	if n := attempts.Load(); n < 2 {
		t.Fatalf("fn ran %d times; want a retry after the serialization failure", n)
	}
	e.wantBalance(t, 11)
}

// TestRunPgxCostsNoRoundTrip counts the round trips of a fenced
// transaction and of the same plain one on one connection: BEGIN goes with
// the fence, so they are equal.
func TestRunPgxCostsNoRoundTrip(t *testing.T) {
	t.Parallel()
	conn, rt, _ := connect(t)
	e := &lockedEnv{locker: memlock.New(nil)}
	newAccounts(t, e, fencesql.PostgreSQL, func(ctx context.Context, s string) error {
		_, err := conn.Exec(ctx, s)
		return err
	}, true)
	ctx := t.Context()
	h, err := e.session(t, time.Minute).Lock(ctx, "account:alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	update := `UPDATE ` + e.accounts + ` SET balance = balance + $1 WHERE id = 'alice'`
	fenced := func() error {
		return e.fences.RunPgx(ctx, h, conn, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, update, 1)
			return err
		}, nil)
	}
	plain := func() error {
		return fencesql.RunPgxTx(ctx, conn, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, update, 1)
			return err
		})
	}
	measure := func(write func() error) int {
		for range 2 { // warm the statement cache
			if err := write(); err != nil {
				t.Fatal(err)
			}
		}
		f0 := rt.count()
		if err := write(); err != nil {
			t.Fatal(err)
		}
		return rt.count() - f0
	}
	p, f := measure(plain), measure(fenced)
	t.Logf("round trips: plain transaction %d, fenced %d", p, f)
	if f != p {
		t.Fatalf("the fenced transaction took %d round trips; the plain one %d", f, p)
	}
}

// mysqlLocked returns locked for database/sql on MySQL, its statements
// translated by mysqlize.
func mysqlLocked(e *lockedEnv, db *sql.DB) func(ctx context.Context, sess *fence.Session, key string, fn txFunc, opts *fencesql.RunOptions) error {
	return func(ctx context.Context, sess *fence.Session, key string, fn txFunc, opts *fencesql.RunOptions) error {
		return e.fences.Locked(ctx, sess, db, key, func(ctx context.Context, tx *sql.Tx) error { return fn(ctx, mysqlTxn{stdTxn{ctx, tx}}) }, opts)
	}
}

func openMySQLEnv(t *testing.T) *lockedEnv {
	db := openMySQL(t, 8, nil)
	e := &lockedEnv{name: "mysql", locker: memlock.New(nil)}
	exec := func(ctx context.Context, s string) error {
		q, _ := mysqlize(s, nil)
		_, err := db.ExecContext(ctx, q)
		return err
	}
	newAccounts(t, e, fencesql.MySQL, exec, true)
	e.locked = mysqlLocked(e, db)
	e.run = func(ctx context.Context, h *fence.Handle, fn txFunc, opts *fencesql.RunOptions) error {
		return e.fences.Run(ctx, h, db, func(ctx context.Context, tx *sql.Tx) error { return fn(ctx, mysqlTxn{stdTxn{ctx, tx}}) }, opts)
	}
	e.balance = func(ctx context.Context) (b int64, err error) {
		q, _ := mysqlize(`SELECT balance FROM `+e.accounts+` WHERE id = 'alice'`, nil)
		err = db.QueryRowContext(ctx, q).Scan(&b)
		return b, err
	}
	e.lossyLocked = func(t *testing.T) func(context.Context, *fence.Session, string, txFunc, *fencesql.RunOptions) error {
		lossy := openMySQL(t, 4, func(cfg *mysql.Config) { cfg.DialFunc = lossyMySQLDial(t, func() {}) })
		return mysqlLocked(e, lossy)
	}
	return e
}
