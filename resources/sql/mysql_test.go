package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// TestMySQLSameTokenAndValueAgain: MySQL reports 0 affected rows both for
// a write that changed nothing (the same token, the same value) and for
// one its condition refused. A rewrite with an equal token and an
// identical value succeeds, and a stale write with an identical value is
// refused, through Fences, Resource and Column, whether or not the client
// asks for found rows (CLIENT_FOUND_ROWS) instead of changed ones, and
// with the driver's text protocol (interpolateParams) as with prepared
// statements.
func TestMySQLSameTokenAndValueAgain(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct{ foundRows, interpolate bool }{{false, false}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("clientFoundRows=%v,interpolateParams=%v", mode.foundRows, mode.interpolate), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			b := mysqlBackend(openMySQL(t, 2, func(c *mysql.Config) {
				c.ClientFoundRows, c.InterpolateParams = mode.foundRows, mode.interpolate
			}))
			tb := b.tables(t)
			f := b.mustFences(t, tb)
			for i, tc := range []struct {
				token, highest fence.Token
				stale          bool
			}{{5, 5, false}, {5, 5, false}, {5, 5, false}, {4, 5, true}, {6, 6, false}, {5, 6, true}, {6, 6, false}} {
				err := b.inTx(ctx, false, func(x txn) error { return x.check(f, "k", tc.token) })
				if tc.stale {
					wantStale(t, err, tc.token, tc.highest)
				} else if err != nil {
					t.Fatalf("check %d of token %d: %v", i, tc.token, err)
				}
			}

			r, err := b.newResource(tb)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := r.Put(ctx, "doc", 7, []byte("same")); err != nil {
					t.Fatalf("Put of the same token and value: %v", err)
				}
			}
			wantStale(t, r.Put(ctx, "doc", 6, []byte("same")), 6, 7)
			if v, tok, err := r.Get(ctx, "doc"); err != nil || string(v) != "same" || tok != 7 {
				t.Fatalf("Get = %q, %d, %v; want same, 7", v, tok, err)
			}

			table := accountsTable(t, b, true)
			c, err := b.newColumn(table, "id", "fence")
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				// The same token and the same balance: the second and third
				// change nothing.
				if err := b.inTx(ctx, false, func(x txn) error { return x.update(c, int64(1), 3, "balance = 10") }); err != nil {
					t.Fatalf("update %d of the same token and value: %v", i, err)
				}
			}
			err = b.inTx(ctx, false, func(x txn) error { return x.update(c, int64(1), 2, "balance = 10") })
			wantStale(t, err, 2, 3)
			err = b.inTx(ctx, false, func(x txn) error { return x.update(c, int64(1), 2, "balance = 11") })
			wantStale(t, err, 2, 3)
			if bal, tok := account(t, b, table); bal != int64(10) || tok != int64(3) {
				t.Fatalf("balance %v, token %v; want 10, 3", bal, tok)
			}
			var nf *fence.NotFoundError
			err = b.inTx(ctx, false, func(x txn) error { return x.update(c, int64(2), 3, "balance = 10") })
			if !errors.As(err, &nf) {
				t.Fatalf("update of a missing row = %v; want a *fence.NotFoundError", err)
			}
		})
	}
}

// TestMySQLCheckAfterASnapshot: under InnoDB's default REPEATABLE READ, a
// transaction that read before a newer holder committed a higher token
// still has its stale token refused: the fence reads the token back with a
// locking read, which sees the latest committed row, where a plain SELECT
// would read the transaction's older snapshot (the old token, equal to the
// caller's) and admit the write.
func TestMySQLCheckAfterASnapshot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openMySQL(t, 3, nil)
	b := mysqlBackend(db)
	tb := b.tables(t)
	f := b.mustFences(t, tb).(*fencesql.Fences[*sql.Tx])
	b.do(t, func(x txn) error { return x.check(f, "k", 5) })
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var seen int64
	if err := tx.QueryRowContext(ctx, "SELECT `token` FROM "+mysqlQuote(tb.FenceTable)+" WHERE `key` = 'k'").Scan(&seen); err != nil || seen != 5 {
		t.Fatalf("snapshot read %d, %v; want 5", seen, err)
	}
	b.do(t, func(x txn) error { return x.check(f, "k", 8) }) // the newer holder
	if err := tx.QueryRowContext(ctx, "SELECT `token` FROM "+mysqlQuote(tb.FenceTable)+" WHERE `key` = 'k'").Scan(&seen); err != nil || seen != 5 {
		t.Fatalf("the snapshot reads %d, %v; want still 5 (or the test proves nothing)", seen, err)
	}
	wantStale(t, f.Check(ctx, tx, "k", 5), 5, 8)
	wantStale(t, f.Check(ctx, tx, "k", 7), 7, 8)
	if err := f.Check(ctx, tx, "k", 8); err != nil {
		t.Fatalf("Check of the newest token in the old snapshot: %v", err)
	}
}

// TestMySQLAssignmentOrder shows on the server the trap the fenced
// statements avoid: MySQL runs the assignments of ON DUPLICATE KEY UPDATE
// left to right, each seeing the values set before it. A value assignment
// whose condition compares the new token with the stored one ("is it
// higher?") stores the new value when it comes first, and keeps the old
// one when it comes after the token's assignment, which has already made
// the stored token the new one. (With GREATEST and >= the two orders
// happen to agree, as the last case shows.) The package's statements give
// the token's check an assignment or a statement of its own, so no order
// of assignments can matter.
func TestMySQLAssignmentOrder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openMySQL(t, 1, nil)
	table := mysqlQuote(uniqueName("order"))
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (k VARCHAR(10) PRIMARY KEY, token BIGINT NOT NULL, val VARCHAR(10) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + table) })
	for _, tc := range []struct {
		assignments string
		token       int64
		want        string
	}{
		{"val = IF(VALUES(token) > token, VALUES(val), val), token = IF(VALUES(token) > token, VALUES(token), token)", 6, "new"},
		{"token = IF(VALUES(token) > token, VALUES(token), token), val = IF(VALUES(token) > token, VALUES(val), val)", 6, "old"}, // the trap
		{"val = IF(VALUES(token) >= token, VALUES(val), val), token = GREATEST(token, VALUES(token))", 6, "new"},
		{"val = IF(VALUES(token) >= token, VALUES(val), val), token = GREATEST(token, VALUES(token))", 4, "old"},
		{"token = GREATEST(token, VALUES(token)), val = IF(VALUES(token) >= token, VALUES(val), val)", 6, "new"},
	} {
		if _, err := db.ExecContext(ctx, "REPLACE INTO "+table+" VALUES ('r', 5, 'old')"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" VALUES ('r', ?, 'new') ON DUPLICATE KEY UPDATE "+tc.assignments, tc.token); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.QueryRowContext(ctx, "SELECT val FROM "+table+" WHERE k = 'r'").Scan(&got); err != nil || got != tc.want {
			t.Errorf("%s with token %d over 5: value %q, %v; want %q", tc.assignments, tc.token, got, err, tc.want)
		}
	}
}

// TestMySQLDeadlockIsRetried provokes a real deadlock: two transactions
// check the fence rows of two keys in opposite orders, each waiting for
// the other's first row. InnoDB rolls one back with error 1213; the
// retry of Run's and Resource's transactions runs that one again, and both commit, each having run its function
// twice or once.
func TestMySQLDeadlockIsRetried(t *testing.T) {
	t.Parallel()
	db := openMySQL(t, 4, nil)
	b := mysqlBackend(db)
	tb := b.tables(t)
	f := b.mustFences(t, tb).(*fencesql.Fences[*sql.Tx])
	b.do(t, func(x txn) error { return x.check(f, "a", 1) })
	b.do(t, func(x txn) error { return x.check(f, "b", 1) })
	var firstLocks sync.WaitGroup
	firstLocks.Add(2)
	var calls [2]atomic.Int32
	var deadlocks atomic.Int32
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, order := range [][2]string{{"a", "b"}, {"b", "a"}} {
		wg.Go(func() {
			errs[i] = fencesql.InTx(t.Context(), f, sql.LevelDefault, func(ctx context.Context, tx *sql.Tx) error {
				n := calls[i].Add(1)
				if err := f.Check(ctx, tx, order[0], 2); err != nil {
					return err
				}
				if n == 1 {
					firstLocks.Done()
					firstLocks.Wait() // both hold their first row
				}
				err := f.Check(ctx, tx, order[1], 2)
				var me *mysql.MySQLError
				if errors.As(err, &me) && me.Number == 1213 {
					deadlocks.Add(1)
				}
				return err
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("transaction %d: %v", i, err)
		}
	}
	if deadlocks.Load() != 1 || calls[0].Load()+calls[1].Load() != 3 {
		t.Errorf("%d deadlocks, functions ran %d and %d times; want one deadlock and one retry", deadlocks.Load(), calls[0].Load(), calls[1].Load())
	}
	for _, k := range []string{"a", "b"} {
		if h, err := b.highest(t.Context(), f, k); err != nil || h != 2 {
			t.Errorf("Highest(%s) = %d, %v; want 2", k, h, err)
		}
	}
}

// TestMySQLRetryable: deadlocks (1213), lock wait timeouts (1205) and
// MariaDB's snapshot conflicts (1020) are retried; other server errors,
// a missing table among them, are not.
func TestMySQLRetryable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		number uint16
		want   bool
	}{{1213, true}, {1205, true}, {1020, true}, {1146, false}, {1064, false}, {1062, false}} {
		err := fmt.Errorf("wrapped: %w", &mysql.MySQLError{Number: tc.number, Message: "x"})
		if got := fencesql.Retryable(err); got != tc.want {
			t.Errorf("Retryable(error %d) = %v; want %v", tc.number, got, tc.want)
		}
	}
}

// MySQLError is a type of the same name as the driver's, in another
// package.
type MySQLError struct{ Number uint16 }

func (*MySQLError) Error() string { return "not the driver's" }

// TestMySQLErrno: the package reads the number of the driver's
// *mysql.MySQLError without importing the driver (by its type's name and
// package), wherever it sits in the error's tree, and nothing else.
func TestMySQLErrno(t *testing.T) {
	t.Parallel()
	driverErr := &mysql.MySQLError{Number: 1213, Message: "deadlock"}
	for _, tc := range []struct {
		desc string
		err  error
		n    uint16
		ok   bool
	}{
		{"the driver's error", driverErr, 1213, true},
		{"wrapped", fmt.Errorf("x: %w", driverErr), 1213, true},
		{"joined", errors.Join(errors.New("a"), fmt.Errorf("b: %w", driverErr)), 1213, true},
		{"a nil *mysql.MySQLError", (*mysql.MySQLError)(nil), 0, false},
		{"a type of the same name elsewhere", &MySQLError{Number: 1213}, 0, false},
		{"the driver's other errors", mysql.ErrInvalidConn, 0, false},
		{"nil", nil, 0, false},
	} {
		if n, ok := fencesql.MySQLErrno(tc.err); n != tc.n || ok != tc.ok {
			t.Errorf("%s: mysqlErrno = %d, %v; want %d, %v", tc.desc, n, ok, tc.n, tc.ok)
		}
	}
}

// TestMySQLLockWaitTimeoutIsRetried: a transaction that waits longer than
// innodb_lock_wait_timeout for a fence row another transaction holds
// fails with error 1205 and is run again; once the holder has
// committed, the retry finds the higher token and gets a stale-token
// error, not the timeout.
func TestMySQLLockWaitTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openMySQL(t, 4, nil)
	waiter := openMySQL(t, 1, func(c *mysql.Config) { c.Params = map[string]string{"innodb_lock_wait_timeout": "1"} })
	b := mysqlBackend(db)
	tb := b.tables(t)
	f := b.mustFences(t, tb).(*fencesql.Fences[*sql.Tx])
	onWaiter, err := fencesql.New(waiter, fencesql.MySQL, &tb)
	if err != nil {
		t.Fatal(err)
	}
	b.do(t, func(x txn) error { return x.check(f, "k", 1) })
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback() }()
	if err := f.Check(ctx, holder, "k", 9); err != nil {
		t.Fatal(err)
	}
	var timeouts atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- fencesql.InTx(ctx, onWaiter, sql.LevelDefault, func(ctx context.Context, tx *sql.Tx) error {
			err := onWaiter.Check(ctx, tx, "k", 5)
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == 1205 {
				if timeouts.Add(1) == 1 {
					_ = holder.Commit() // the holder finishes after one timeout
				}
			}
			return err
		})
	}()
	err = <-done
	if timeouts.Load() < 1 {
		t.Fatalf("no lock wait timeout (err %v); the test proves nothing", err)
	}
	wantStale(t, err, 5, 9)
}

// TestMySQLNames: names are backquoted, up to 64 bytes (one more than
// PostgreSQL's limit), and the SET clauses of a MySQL Column take ?
// placeholders, backquoted names and qualified targets, and refuse what
// could reach past them in MySQL (# comments, $ placeholders, a count of
// ? that is not the number of arguments) or assign the fence column.
func TestMySQLNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("t", fencesql.MaxMySQLIdentLen)
	db := new(sql.DB) // never reached
	if _, err := fencesql.New(db, fencesql.MySQL, &fencesql.Options{FenceTable: long}); err != nil {
		t.Errorf("New(MySQL, a 64-byte fence table) = %v; want it accepted", err)
	}
	if _, err := fencesql.New(db, fencesql.MySQL, &fencesql.Options{FenceTable: long + "t"}); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New(MySQL, a 65-byte fence table) = %v; want ErrInvalid", err)
	}
	if _, err := offlineFences(t, fencesql.MySQL).Column("t", "id", long+"t"); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("Column(MySQL, a 65-byte fence column) = %v; want ErrInvalid", err)
	}
	if def := offlineColumn(t, fencesql.MySQL, "t", "id", "fe`nce").Definition(); def != "`fe``nce` BIGINT NOT NULL DEFAULT 0 CHECK (`fe``nce` >= 0)" {
		t.Errorf("MySQL Definition = %q", def)
	}
	c := offlineColumn(t, fencesql.MySQL, "app.accounts", "id", "fence")
	got, err := fencesql.UpdateSQL(c, "balance = balance + ?, `note` = 'a ?'", 1)
	want := "UPDATE `app`.`accounts` SET balance = balance + ?, `note` = 'a ?'\n, `fence` = ?\nWHERE `id` = ? AND `fence` >= 0 AND `fence` <= ?"
	if err != nil || got != want {
		t.Errorf("UpdateSQL = %q, %v; want %q", got, err, want)
	}
	for _, tc := range []struct {
		set   string
		nargs int
	}{
		{"a = 1 # comment", 0},
		{"a = $1", 1},
		{"a = ?", 0},
		{"a = ?, b = ?", 1},
		{"a = 1", 1},
		{"`fence` = 1", 0},
		{"`FENCE` = 1", 0},
		{"accounts.fence = 1", 0},
		{"app.accounts.`fence` = 1", 0},
		{"a = `open", 0},
		{`a = 'it\'s'`, 0},
		{"a = 1; DELETE FROM accounts", 0},
		{"a = 1 -- c", 0},
		{"a = 1 /*! c */", 0},
	} {
		if _, err := fencesql.UpdateSQL(c, tc.set, tc.nargs); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("MySQL UpdateSQL(%q, %d) = %v; want ErrInvalid", tc.set, tc.nargs, err)
		}
	}
	for _, set := range []string{"accounts.balance = ?", "`odd`` name` = ?", "note = \"x # y\", b = ?"} {
		if _, err := fencesql.UpdateSQL(c, set, strings.Count(set, "?")); err != nil {
			t.Errorf("MySQL UpdateSQL(%q) = %v; want it accepted", set, err)
		}
	}
}
