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

// runFunc runs fn in a fenced transaction under h, through Run on one
// database and driver family.
type runFunc func(ctx context.Context, h *fence.Handle, fn txFunc, opts *fencesql.RunOptions) error

// lockedEnv is one database and driver family with what the fenced
// transactions need: a locker, a fence table and an accounts table with
// the account "alice" at balance 0.
type lockedEnv struct {
	name     string
	locker   *fence.Locker
	tables   fencesql.Options
	fences   fences
	accounts string // quoted
	// run runs fn through Run on the env's database; runAll through
	// RunAll.
	run    runFunc
	runAll runAllFunc
	// lossyRun is run on connections of their own whose first COMMIT is
	// applied but loses its answer.
	lossyRun func(t *testing.T) runFunc
	// balance reads alice's balance.
	balance func(ctx context.Context) (int64, error)
}

// locked takes key through sess, waiting as lock says, runs fn under the
// handle through run and releases the lock, also when fn panics: what
// guard.Run does around a call of Run.
func (e *lockedEnv) locked(ctx context.Context, run runFunc, sess *fence.Session, key string, fn txFunc, lock *fence.LockOptions, opts *fencesql.RunOptions) error {
	h, err := sess.Lock(ctx, key, lock)
	if err != nil {
		return err
	}
	defer func() { _ = h.Release(context.WithoutCancel(ctx)) }()
	return run(ctx, h, fn, opts)
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

// lockedKinds are the databases and driver families of the fenced
// transactions: pgx and database/sql on PostgreSQL, with the PostgreSQL
// locker, and SQLite and MySQL (database/sql) with the in-memory locker.
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
func pgLocker(t testing.TB, pool *pgxpool.Pool) *fence.Locker {
	t.Helper()
	table := uniqueName("locks")
	l, err := postgres.New(pool, &postgres.Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Create(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), fmt.Sprintf(`DROP TABLE IF EXISTS %q`, table)) })
	return l
}

// newAccounts creates the fence table, through the Fences newFences
// returns, and the accounts table through exec, and fills in e's names;
// on PostgreSQL and MySQL drop drops them later.
func newAccounts(t testing.TB, e *lockedEnv, newFences func(*fencesql.Options) (fences, error), exec func(ctx context.Context, stmt string) error, drop bool) {
	t.Helper()
	ctx := t.Context()
	e.tables = fencesql.Options{FenceTable: uniqueName("fence"), ValueTable: uniqueName("value")}
	var err error
	if e.fences, err = newFences(&e.tables); err != nil {
		t.Fatal(err)
	}
	accounts := uniqueName("accounts")
	e.accounts = fmt.Sprintf("%q", accounts)
	stmts := append(e.fences.SchemaSQL(),
		`CREATE TABLE `+e.accounts+` (id text PRIMARY KEY, balance bigint NOT NULL)`,
		`INSERT INTO `+e.accounts+` (id, balance) VALUES ('alice', 0)`)
	for _, s := range stmts {
		if err := exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if drop {
		t.Cleanup(func() {
			for _, tbl := range []string{e.tables.FenceTable, e.tables.ValueTable, accounts} {
				_ = exec(context.Background(), fmt.Sprintf(`DROP TABLE IF EXISTS %q`, tbl))
			}
		})
	}
}

// pgxRun returns run for pgx on the tables of f.
func pgxRun(f *fencesql.Fences[pgx.Tx]) runFunc {
	return func(ctx context.Context, h *fence.Handle, fn txFunc, opts *fencesql.RunOptions) error {
		return f.Run(ctx, h, func(ctx context.Context, tx pgx.Tx) error { return fn(ctx, pgxTxn{ctx, tx}) }, opts)
	}
}

// runAllFunc runs fn in a fenced transaction under hs, through RunAll on
// one database and driver family; a nil fn is passed on as nil.
type runAllFunc func(ctx context.Context, hs []*fence.Handle, fn txFunc) error

// pgxRunAll returns runAll for pgx on the tables of f.
func pgxRunAll(f *fencesql.Fences[pgx.Tx]) runAllFunc {
	return func(ctx context.Context, hs []*fence.Handle, fn txFunc) error {
		if fn == nil {
			return f.RunAll(ctx, hs, nil)
		}
		return f.RunAll(ctx, hs, func(ctx context.Context, tx pgx.Tx) error { return fn(ctx, pgxTxn{ctx, tx}) })
	}
}

// stdRunAll returns runAll for database/sql on the tables of f; wrap
// makes the transaction a txn.
func stdRunAll(f *fencesql.Fences[*sql.Tx], wrap func(stdTxn) txn) runAllFunc {
	return func(ctx context.Context, hs []*fence.Handle, fn txFunc) error {
		if fn == nil {
			return f.RunAll(ctx, hs, nil)
		}
		return f.RunAll(ctx, hs, func(ctx context.Context, tx *sql.Tx) error { return fn(ctx, wrap(stdTxn{ctx, tx})) })
	}
}

// stdRun returns run for database/sql on the tables of f; wrap makes the
// transaction a txn.
func stdRun(f *fencesql.Fences[*sql.Tx], wrap func(stdTxn) txn) runFunc {
	return func(ctx context.Context, h *fence.Handle, fn txFunc, opts *fencesql.RunOptions) error {
		return f.Run(ctx, h, func(ctx context.Context, tx *sql.Tx) error { return fn(ctx, wrap(stdTxn{ctx, tx})) }, opts)
	}
}

// asStd is the txn of a database/sql transaction on PostgreSQL or SQLite.
func asStd(x stdTxn) txn { return x }

// mustPgx returns the Fences of tb on db.
func mustPgx(t testing.TB, db fencesql.PgxDB, tb fencesql.Options) *fencesql.Fences[pgx.Tx] {
	t.Helper()
	f, err := fencesql.NewPgx(db, &tb)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// mustStd returns the Fences of tb on db in dialect d.
func mustStd(t testing.TB, db *sql.DB, d fencesql.Dialect, tb fencesql.Options) *fencesql.Fences[*sql.Tx] {
	t.Helper()
	f, err := fencesql.New(db, d, &tb)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func openPgxEnv(t *testing.T) *lockedEnv {
	pool := openPgPool(t, 8, nil)
	e := &lockedEnv{name: "postgres-pgx", locker: pgLocker(t, pool)}
	newAccounts(t, e, pgxFences(pool), func(ctx context.Context, s string) error {
		_, err := pool.Exec(ctx, s)
		return err
	}, true)
	e.run = pgxRun(mustPgx(t, pool, e.tables))
	e.runAll = pgxRunAll(mustPgx(t, pool, e.tables))
	e.lossyRun = func(t *testing.T) runFunc {
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
		return pgxRun(mustPgx(t, lossy, e.tables))
	}
	e.balance = func(ctx context.Context) (b int64, err error) {
		err = pool.QueryRow(ctx, `SELECT balance FROM `+e.accounts+` WHERE id = 'alice'`).Scan(&b)
		return b, err
	}
	return e
}

// openStd returns the parts of an env on db, a PostgreSQL or SQLite
// database through database/sql.
func openStd(t *testing.T, e *lockedEnv, db *sql.DB, d fencesql.Dialect) {
	e.run = stdRun(mustStd(t, db, d, e.tables), asStd)
	e.runAll = stdRunAll(mustStd(t, db, d, e.tables), asStd)
	e.balance = func(ctx context.Context) (b int64, err error) {
		err = db.QueryRowContext(ctx, `SELECT balance FROM `+e.accounts+` WHERE id = 'alice'`).Scan(&b)
		return b, err
	}
}

func openStdEnv(t *testing.T) *lockedEnv {
	db := openPgStd(t, 8)
	e := &lockedEnv{name: "postgres-stdlib", locker: pgLocker(t, openPgPool(t, 4, nil))}
	newAccounts(t, e, stdFences(db, fencesql.PostgreSQL), func(ctx context.Context, s string) error {
		_, err := db.ExecContext(ctx, s)
		return err
	}, true)
	openStd(t, e, db, fencesql.PostgreSQL)
	e.lossyRun = func(t *testing.T) runFunc {
		cfg, err := pgx.ParseConfig(testenv.PostgresURL(t))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DialFunc = lossyDial(t, func() {})
		lossy := stdlib.OpenDB(*cfg)
		t.Cleanup(func() { _ = lossy.Close() })
		return stdRun(mustStd(t, lossy, fencesql.PostgreSQL, e.tables), asStd)
	}
	return e
}

func openSQLiteEnv(t *testing.T) *lockedEnv {
	dsn := sqliteDSN(t)
	db := openSQLiteDSN(t, dsn)
	e := &lockedEnv{name: "sqlite", locker: memlock.New(nil)}
	newAccounts(t, e, stdFences(db, fencesql.SQLite), func(ctx context.Context, s string) error {
		_, err := db.ExecContext(ctx, s)
		return err
	}, false)
	openStd(t, e, db, fencesql.SQLite)
	e.lossyRun = func(t *testing.T) runFunc {
		return stdRun(mustStd(t, lostSQLiteDB(t, dsn, func() {}), fencesql.SQLite, e.tables), asStd)
	}
	return e
}

// TestRunCommits: under a lock the application took, the fenced
// transaction passes the fence with the lease's token first, then runs fn
// and commits.
func TestRunCommits(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		sess := e.session(t, time.Minute)
		var token fence.Token
		err := e.locked(ctx, e.run, sess, "account:alice", func(ctx context.Context, x txn) error {
			v, err := x.scalar(`SELECT token FROM "`+e.tables.FenceTable+`" WHERE key = $1`, "account:alice")
			if err != nil {
				return err
			}
			n, _ := v.(int64)
			token = fence.Token(n)
			return e.credit(25)(ctx, x)
		}, nil, nil)
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
		if err := e.locked(ctx, e.run, sess, "account:alice", e.credit(5), nil, &fencesql.RunOptions{Name: "account:alice/credit"}); err != nil {
			t.Fatal(err)
		}
		e.wantBalance(t, 30)
		e.wantFree(t, "account:alice")
	})
}

// TestRunOnABusyKey: while another owner holds the key, taking the lock
// for the fenced transaction returns ErrHeld and runs nothing; with
// LockOptions.Wait it waits for the release.
func TestRunOnABusyKey(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		holder, err := e.session(t, time.Minute).Lock(ctx, "account:alice", nil)
		if err != nil {
			t.Fatal(err)
		}
		ran := false
		err = e.locked(ctx, e.run, e.session(t, time.Minute), "account:alice", func(context.Context, txn) error {
			ran = true
			return nil
		}, nil, nil)
		if !errors.Is(err, fence.ErrHeld) || ran {
			t.Fatalf("on a busy key: %v, fn ran: %v; want ErrHeld and fn not run", err, ran)
		}
		errc := make(chan error, 1)
		go func() {
			errc <- e.locked(ctx, e.run, e.session(t, time.Minute), "account:alice", e.credit(1), &fence.LockOptions{Wait: time.Minute}, nil)
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

// TestRunOutlivesTTL: a job of three TTLs commits; the session renews
// its lease meanwhile.
func TestRunOutlivesTTL(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		err := e.locked(ctx, e.run, e.session(t, time.Second), "account:alice", func(ctx context.Context, x txn) error {
			select {
			case <-ctx.Done():
				return fmt.Errorf("cancelled during the job: %w", context.Cause(ctx))
			case <-time.After(3 * time.Second):
			}
			return e.credit(7)(ctx, x)
		}, nil, nil)
		if err != nil {
			t.Fatalf("a 3 s job under a 1 s TTL: %v", err)
		}
		e.wantBalance(t, 7)
		e.wantFree(t, "account:alice")
	})
}

// TestRunLeaseLost: an operator breaks the lock while the transaction
// runs; the next renewal finds the lease gone, fn's context is cancelled
// with the loss, the transaction rolls back and the error matches
// ErrLeaseLost.
func TestRunLeaseLost(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		var cause error
		err := e.locked(ctx, e.run, e.session(t, time.Second), "account:alice", func(ctx context.Context, x txn) error {
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
		}, nil, nil)
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

// TestRunFnError: fn's error rolls the transaction back and comes back
// as it is; the lock is released.
func TestRunFnError(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		errBoom := errors.New("boom")
		err := e.locked(ctx, e.run, e.session(t, time.Minute), "account:alice", func(ctx context.Context, x txn) error {
			if err := e.credit(50)(ctx, x); err != nil {
				return err
			}
			return errBoom
		}, nil, nil)
		if err != errBoom {
			t.Fatalf("err = %v; want fn's error unchanged", err)
		}
		e.wantBalance(t, 0)
		e.wantFree(t, "account:alice")
	})
}

// TestRunPanic: a panic in fn rolls back, releases the lock and goes
// on.
func TestRunPanic(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		ctx := t.Context()
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Fatalf("recovered %v; want fn's panic", r)
				}
			}()
			_ = e.locked(ctx, e.run, e.session(t, time.Minute), "account:alice", func(ctx context.Context, x txn) error {
				if err := e.credit(50)(ctx, x); err != nil {
					return err
				}
				panic("boom")
			}, nil, nil)
		}()
		e.wantBalance(t, 0)
		e.wantFree(t, "account:alice")
	})
}

// TestRunCommitAnswerLost: the database applies the COMMIT but its
// answer is lost: the error matches ErrUnknownOutcome (the write may have
// been applied, and here was), never ErrLeaseLost or ErrStaleToken.
func TestRunCommitAnswerLost(t *testing.T) {
	t.Parallel()
	onEachLockedEnv(t, func(t *testing.T, e *lockedEnv) {
		err := e.locked(t.Context(), e.lossyRun(t), e.session(t, time.Minute), "account:alice", e.credit(3), nil, nil)
		if !errors.Is(err, fence.ErrUnknownOutcome) || errors.Is(err, fence.ErrLeaseLost) || errors.Is(err, fence.ErrStaleToken) {
			t.Fatalf("COMMIT answer lost: %v; want ErrUnknownOutcome only", err)
		}
		e.wantBalance(t, 3)
	})
}

// TestRunRefusesBadInput: invalid arguments get ErrInvalid, and nothing
// is sent.
func TestRunRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := openPgxEnv(t)
	ctx := t.Context()
	sess := e.session(t, time.Minute)
	f := e.fences.(*fencesql.Fences[pgx.Tx])
	std := mustStd(t, openPgStd(t, 1), fencesql.PostgreSQL, e.tables)
	fn := func(context.Context, pgx.Tx) error { return nil }
	h, err := sess.Lock(ctx, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	var nilFences *fencesql.Fences[pgx.Tx]
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"nil fences", func() error { return nilFences.Run(ctx, h, fn, nil) }},
		{"nil handle", func() error { return f.Run(ctx, nil, fn, nil) }},
		{"nil fn", func() error { return f.Run(ctx, h, nil, nil) }},
		{"a name not under the key", func() error { return f.Run(ctx, h, fn, &fencesql.RunOptions{Name: "other"}) }},
		{"a name with a .. segment", func() error { return f.Run(ctx, h, fn, &fencesql.RunOptions{Name: "k/../x"}) }},
		{"an isolation level PostgreSQL lacks", func() error {
			return f.Run(ctx, h, fn, &fencesql.RunOptions{Isolation: sql.LevelLinearizable})
		}},
		{"database/sql: nil handle", func() error {
			return std.Run(ctx, nil, func(context.Context, *sql.Tx) error { return nil }, nil)
		}},
		{"database/sql: nil fn", func() error { return std.Run(ctx, h, nil, nil) }},
	} {
		err := tc.call()
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s: %v; want ErrInvalid", tc.name, err)
		} else if !strings.HasPrefix(err.Error(), "fence/sql: transaction") {
			t.Errorf("%s: %q; want it to start with %q", tc.name, err, "fence/sql: transaction")
		}
	}
	if h, err := f.Resource().Highest(ctx, "k"); err != nil || h != 0 {
		t.Fatalf("Highest(k) = %d, %v after the refused calls; want 0, no fence row", h, err)
	}

	// A handle already released is refused without a transaction.
	_ = h.Release(ctx)
	ran := false
	if err := f.Run(ctx, h, func(context.Context, pgx.Tx) error { ran = true; return nil }, nil); !errors.Is(err, fence.ErrReleased) || ran {
		t.Fatalf("Run with a released handle: %v, fn ran: %v; want ErrReleased, fn not run", err, ran)
	}
}

// TestRunRetriesConflicts: under REPEATABLE READ, a transaction that
// updates a row a concurrent one changed fails with a serialization
// failure; Run runs it again, fence included, and it commits.
func TestRunRetriesConflicts(t *testing.T) {
	t.Parallel()
	e := openPgxEnv(t)
	ctx := t.Context()
	pool := openPgPool(t, 2, nil)  // the two transactions
	watch := openPgPool(t, 1, nil) // the look at the second's wait
	f := mustPgx(t, pool, e.tables)
	rr := &fencesql.RunOptions{Isolation: sql.LevelRepeatableRead}
	first, err := e.session(t, time.Minute).Lock(ctx, "first", nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.session(t, time.Minute).Lock(ctx, "second", nil)
	if err != nil {
		t.Fatal(err)
	}
	firstIn, firstGo := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- f.Run(ctx, first, func(ctx context.Context, tx pgx.Tx) error {
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
		secondc <- f.Run(ctx, second, func(ctx context.Context, tx pgx.Tx) error {
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
	newAccounts(t, e, pgxFences(conn), func(ctx context.Context, s string) error {
		_, err := conn.Exec(ctx, s)
		return err
	}, true)
	f := e.fences.(*fencesql.Fences[pgx.Tx])
	ctx := t.Context()
	h, err := e.session(t, time.Minute).Lock(ctx, "account:alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	update := `UPDATE ` + e.accounts + ` SET balance = balance + $1 WHERE id = 'alice'`
	fenced := func() error {
		return f.Run(ctx, h, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, update, 1)
			return err
		}, nil)
	}
	plain := func() error {
		return fencesql.InTx(ctx, f, sql.LevelDefault, func(ctx context.Context, tx pgx.Tx) error {
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
	p, fc := measure(plain), measure(fenced)
	t.Logf("round trips: plain transaction %d, fenced %d", p, fc)
	if fc != p {
		t.Fatalf("the fenced transaction took %d round trips; the plain one %d", fc, p)
	}
}

// asMySQL is the txn of a database/sql transaction on MySQL, its
// statements translated by mysqlize.
func asMySQL(x stdTxn) txn { return mysqlTxn{x} }

func openMySQLEnv(t *testing.T) *lockedEnv {
	db := openMySQL(t, 8, nil)
	e := &lockedEnv{name: "mysql", locker: memlock.New(nil)}
	exec := func(ctx context.Context, s string) error {
		q, _ := mysqlize(s, nil)
		_, err := db.ExecContext(ctx, q)
		return err
	}
	newAccounts(t, e, stdFences(db, fencesql.MySQL), exec, true)
	e.run = stdRun(mustStd(t, db, fencesql.MySQL, e.tables), asMySQL)
	e.runAll = stdRunAll(mustStd(t, db, fencesql.MySQL, e.tables), asMySQL)
	e.balance = func(ctx context.Context) (b int64, err error) {
		q, _ := mysqlize(`SELECT balance FROM `+e.accounts+` WHERE id = 'alice'`, nil)
		err = db.QueryRowContext(ctx, q).Scan(&b)
		return b, err
	}
	e.lossyRun = func(t *testing.T) runFunc {
		lossy := openMySQL(t, 4, func(cfg *mysql.Config) { cfg.DialFunc = lossyMySQLDial(t, func() {}) })
		return stdRun(mustStd(t, lossy, fencesql.MySQL, e.tables), asMySQL)
	}
	return e
}
