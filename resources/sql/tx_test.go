package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
	memlock "github.com/fencekit/fence/lockers/memory"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// serializationFailure makes the server fail the statement with SQLSTATE
// 40001, as a conflicting SERIALIZABLE transaction would.
const serializationFailure = `DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$`

// TestTxGivesUpOnEndlessConflicts: the transactions of Run and Resource
// run again after a conflict until ctx ends, and then give up with an
// error of their own that is Retryable and wraps ctx's.
func TestTxGivesUpOnEndlessConflicts(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, err error, calls int) {
		t.Helper()
		var ce *fencesql.ConflictError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v; want a *fencesql.ConflictError", err)
		}
		if !errors.Is(err, context.DeadlineExceeded) || !fencesql.Retryable(ce.Err) {
			t.Fatalf("err = %v; want it to wrap the deadline and a retryable conflict", err)
		}
		if ce.Attempts < 2 || (calls > 0 && ce.Attempts != calls) {
			t.Fatalf("%d attempts, fn called %d times; want at least 2, equal", ce.Attempts, calls)
		}
		var oe *fence.OpError
		if !errors.As(err, &oe) || oe.Backend != "sql" || oe.Op != "transaction" {
			t.Fatalf("err = %v; want it in a *fence.OpError of sql, transaction", err)
		}
	}
	t.Run("postgres-stdlib", func(t *testing.T) {
		t.Parallel()
		f := mustNew(t, openPgStd(t, 2), fencesql.PostgreSQL)
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		calls := 0
		err := fencesql.InTx(ctx, f, sql.LevelDefault, func(ctx context.Context, tx *sql.Tx) error {
			calls++
			_, err := tx.ExecContext(ctx, serializationFailure)
			return err
		})
		check(t, err, calls)
	})
	t.Run("mysql", func(t *testing.T) {
		t.Parallel()
		f := mustNew(t, openMySQL(t, 2, nil), fencesql.MySQL)
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		calls := 0
		err := fencesql.InTx(ctx, f, sql.LevelDefault, func(ctx context.Context, tx *sql.Tx) error {
			calls++
			// The server's own deadlock error, as InnoDB raises it.
			_, err := tx.ExecContext(ctx, "SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'deadlock'")
			return err
		})
		check(t, err, calls)
	})
	t.Run("postgres-pgx", func(t *testing.T) {
		t.Parallel()
		f, err := fencesql.NewPgx(openPgPool(t, 2, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		calls := 0
		err = fencesql.InTx(ctx, f, sql.LevelDefault, func(ctx context.Context, tx pgx.Tx) error {
			calls++
			_, err := tx.Exec(ctx, serializationFailure)
			return err
		})
		check(t, err, calls)
	})
	t.Run("sqlite-busy", func(t *testing.T) {
		t.Parallel()
		// Another connection holds the write lock; this one does not wait.
		dsn := "file:" + filepath.Join(t.TempDir(), "busy.db") + "?_pragma=journal_mode(WAL)&_txlock=immediate"
		holder, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		lock, err := holder.BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = lock.Rollback() }()
		if _, err := lock.Exec(`CREATE TABLE x (a int)`); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		err = fencesql.InTx(ctx, mustNew(t, db, fencesql.SQLite), sql.LevelDefault, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE y (a int)`)
			return err
		})
		check(t, err, 0)
	})
}

// TestTxReturnsOtherErrorsUnchangedAndRollsBack: a transaction whose
// function fails for another reason than a conflict runs once, returns
// the error as it is and rolls back; a panic rolls back and goes on.
func TestTxReturnsOtherErrorsUnchangedAndRollsBack(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		f := b.mustFences(t, tb)
		b.do(t, func(x txn) error { return x.check(f, "n", 9) })
		calls := 0
		err := b.inTx(t.Context(), false, func(x txn) error {
			calls++
			if err := x.exec(fmt.Sprintf(`INSERT INTO %q (key, token) VALUES ('written', 1)`, tb.FenceTable)); err != nil {
				return err
			}
			return x.check(f, "n", 3)
		})
		wantStale(t, err, 3, 9)
		if calls != 1 {
			t.Errorf("fn ran %d times for a stale token; want 1", calls)
		}
		if got := storedToken(t, b, tb.FenceTable, "written"); got != nil {
			t.Errorf("the insert before the stale check was committed: %v", got)
		}
		// A panic rolls back too, and goes on.
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("recovered %v; want the panic to pass through", r)
				}
			}()
			_ = b.inTx(t.Context(), false, func(x txn) error {
				if err := x.check(f, "n", 10); err != nil {
					return err
				}
				panic("boom")
			})
		}()
		if got := storedToken(t, b, tb.FenceTable, "n"); got != int64(9) {
			t.Errorf("fence row holds %v after a panicking transaction; want 9", got)
		}
	})
}

// TestRunGivesUpOnEndlessConflicts: Run runs its transaction again,
// fence included, after each conflict, until ctx ends; it then returns
// an error of operation "transaction" that is Retryable and wraps ctx's.
func TestRunGivesUpOnEndlessConflicts(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, err error, calls int) {
		t.Helper()
		var oe *fence.OpError
		if !errors.As(err, &oe) || oe.Backend != "sql" || oe.Op != "transaction" || oe.Key != "k" {
			t.Fatalf("err = %v; want it in a *fence.OpError of sql, transaction, k", err)
		}
		var ce *fencesql.ConflictError
		if !errors.As(err, &ce) || !fencesql.Retryable(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v; want conflicts given up on, Retryable, wrapping the deadline", err)
		}
		// The last attempt may have been cut in its fence, before fn.
		if calls < 2 || ce.Attempts < calls || ce.Attempts > calls+1 {
			t.Fatalf("%d attempts, fn called %d times; want at least 2, one fn call per attempt", ce.Attempts, calls)
		}
	}
	sess, err := fence.NewSession(memlock.New(nil), &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close(context.Background()) })
	lock := func(t *testing.T) *fence.Handle {
		h, err := sess.Lock(t.Context(), "k", &fence.LockOptions{Wait: fence.WaitForever})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Release(context.Background()) })
		return h
	}
	t.Run("postgres-stdlib", func(t *testing.T) {
		b := sqlBackend("postgres-stdlib", fencesql.PostgreSQL, openPgStd(t, 2))
		f := b.mustFences(t, b.tables(t)).(*fencesql.Fences[*sql.Tx])
		h := lock(t)
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		calls := 0
		err := f.Run(ctx, h, func(ctx context.Context, tx *sql.Tx) error {
			calls++
			_, err := tx.ExecContext(ctx, serializationFailure)
			return err
		}, nil)
		check(t, err, calls)
	})
	t.Run("postgres-pgx", func(t *testing.T) {
		b := pgxBackend(openPgPool(t, 2, nil))
		f := b.mustFences(t, b.tables(t)).(*fencesql.Fences[pgx.Tx])
		h := lock(t)
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		calls := 0
		err := f.Run(ctx, h, func(ctx context.Context, tx pgx.Tx) error {
			calls++
			_, err := tx.Exec(ctx, serializationFailure)
			return err
		}, nil)
		check(t, err, calls)
	})
}

// mustNew returns the Fences of db, with the default tables.
func mustNew(t testing.TB, db *sql.DB, d fencesql.Dialect) *fencesql.Fences[*sql.Tx] {
	t.Helper()
	f, err := fencesql.New(db, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("x"), false},
		{&fence.StaleTokenError{}, false},
		{context.Canceled, false},
	} {
		if got := fencesql.Retryable(tc.err); got != tc.want {
			t.Errorf("Retryable(%v) = %v; want %v", tc.err, got, tc.want)
		}
	}
}
