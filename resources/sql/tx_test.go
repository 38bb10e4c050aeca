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
	fencesql "github.com/fencekit/fence/resources/sql"
)

// serializationFailure makes the server fail the statement with SQLSTATE
// 40001, as a conflicting SERIALIZABLE transaction would.
const serializationFailure = `DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$`

func TestRunTxGivesUpOnEndlessConflicts(t *testing.T) {
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
		db := openPgStd(t, 2)
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		calls := 0
		err := fencesql.RunTx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
			calls++
			_, err := tx.ExecContext(ctx, serializationFailure)
			return err
		})
		check(t, err, calls)
	})
	t.Run("mysql", func(t *testing.T) {
		t.Parallel()
		db := openMySQL(t, 2, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		calls := 0
		err := fencesql.RunTx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
			calls++
			// The server's own deadlock error, as InnoDB raises it.
			_, err := tx.ExecContext(ctx, "SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'deadlock'")
			return err
		})
		check(t, err, calls)
	})
	t.Run("postgres-pgx", func(t *testing.T) {
		t.Parallel()
		pool := openPgPool(t, 2, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
		defer cancel()
		calls := 0
		err := fencesql.RunPgxTx(ctx, pool, pgx.TxOptions{}, func(ctx context.Context, tx pgx.Tx) error {
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
		err = fencesql.RunTx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE y (a int)`)
			return err
		})
		check(t, err, 0)
	})
}

func TestRunTxReturnsOtherErrorsUnchangedAndRollsBack(t *testing.T) {
	t.Parallel()
	onEachBackend(t, 2, func(t *testing.T, b *backend) {
		tb := b.tables(t)
		f, err := b.newFences(tb.Fence)
		if err != nil {
			t.Fatal(err)
		}
		b.do(t, func(x txn) error { return x.check(f, "n", 9) })
		calls := 0
		err = b.inTx(t.Context(), false, func(x txn) error {
			calls++
			if err := x.exec(fmt.Sprintf(`INSERT INTO %q (key, token) VALUES ('written', 1)`, tb.Fence)); err != nil {
				return err
			}
			return x.check(f, "n", 3)
		})
		wantStale(t, err, 3, 9)
		if calls != 1 {
			t.Errorf("fn ran %d times for a stale token; want 1", calls)
		}
		if got := storedToken(t, b, tb.Fence, "written"); got != nil {
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
		if got := storedToken(t, b, tb.Fence, "n"); got != int64(9) {
			t.Errorf("fence row holds %v after a panicking transaction; want 9", got)
		}
	})
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
