package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	memlock "github.com/fencekit/fence/lockers/memory"
	"github.com/fencekit/fence/lockers/postgres"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// Fenced transactions under a lease: the application's session takes the
// lock, and each transaction checks the lease's token first, then writes
// and commits. One handle serves many transactions. (guard.Run takes and
// releases the lock around such work.)
func ExampleFences_Run() {
	ctx := context.Background()
	db, cleanup := openExampleDB()
	defer cleanup()
	fences, err := fencesql.New(db, fencesql.SQLite, nil)
	if err != nil {
		panic(err)
	}
	if err := fences.Create(ctx); err != nil {
		panic(err)
	}
	if _, err := db.Exec(`CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
		INSERT INTO accounts VALUES ('alice', 0)`); err != nil {
		panic(err)
	}
	sess, err := fence.NewSession(memlock.New(nil), &fence.SessionOptions{TTL: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)
	h, err := sess.Lock(ctx, "account:alice", &fence.LockOptions{Wait: 5 * time.Second})
	if err != nil {
		panic(err)
	}
	defer h.Release(ctx)

	credit := func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + 25 WHERE id = 'alice'`)
		return err
	}
	fmt.Println("credit:", fences.Run(ctx, h, credit, nil))
	fmt.Println("again:", fences.Run(ctx, h, credit, nil))

	var balance int
	_ = db.QueryRow(`SELECT balance FROM accounts WHERE id = 'alice'`).Scan(&balance)
	fmt.Println("balance:", balance)
	// Output:
	// credit: <nil>
	// again: <nil>
	// balance: 50
}

// The same with pgx: BEGIN and the fence go in one batch, so the fence
// costs no round trip beyond the transaction's own.
func ExampleFences_Run_pgx() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	locker, err := postgres.New(pool, nil) // leases in the same database
	if err != nil {
		panic(err)
	}
	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)
	fences, err := fencesql.NewPgx(pool, nil)
	if err != nil {
		panic(err)
	}

	h, err := sess.Lock(ctx, "account:alice", nil)
	if errors.Is(err, fence.ErrHeld) {
		return // another replica holds the key: skip this turn
	} else if err != nil {
		panic(err)
	}
	defer h.Release(ctx)
	err = fences.Run(ctx, h, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance + 25 WHERE id = 'alice'`)
		return err
	}, nil)
	switch {
	case errors.Is(err, fence.ErrLeaseLost): // lost before the commit: rolled back
	case errors.Is(err, fence.ErrStaleToken): // a newer holder wrote first: rolled back
	case err != nil: // the write's own error, or fence.ErrUnknownOutcome
	}
}

// A holder whose lock was broken, and taken by another replica that has
// written since, runs a transaction: the fence refuses the old token, and
// nothing of the transaction commits. (A fake clock keeps the old handle's
// keepalive from noticing the loss first.)
func ExampleFences_Run_stale() {
	ctx := context.Background()
	db, cleanup := openExampleDB()
	defer cleanup()
	fences, err := fencesql.New(db, fencesql.SQLite, nil)
	if err != nil {
		panic(err)
	}
	if err := fences.Create(ctx); err != nil {
		panic(err)
	}
	if _, err := db.Exec(`CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
		INSERT INTO accounts VALUES ('alice', 0)`); err != nil {
		panic(err)
	}
	clock := clocktest.New(time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))
	locker := memlock.New(&memlock.Options{Clock: clock})
	sess, err := fence.NewSession(locker, &fence.SessionOptions{Clock: clock})
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)
	credit := func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + 25 WHERE id = 'alice'`)
		return err
	}

	old, _ := sess.Lock(ctx, "account:alice", nil)
	_ = locker.Break(ctx, "account:alice") // an operator frees the lock
	next, _ := sess.Lock(ctx, "account:alice", nil)
	fmt.Println("new holder:", fences.Run(ctx, next, credit, nil))

	err = fences.Run(ctx, old, credit, nil)
	fmt.Println("old holder:", errors.Is(err, fence.ErrStaleToken))
	fmt.Println(err)
	var balance int
	_ = db.QueryRow(`SELECT balance FROM accounts WHERE id = 'alice'`).Scan(&balance)
	fmt.Println("balance:", balance)
	// Output:
	// new holder: <nil>
	// old holder: true
	// fence/sql: check "account:alice": stale token 1 (highest seen 2)
	// balance: 25
}
