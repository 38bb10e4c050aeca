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
	memlock "github.com/fencekit/fence/lockers/memory"
	"github.com/fencekit/fence/lockers/postgres"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// One fenced write under a lease, in one call: lock, transaction with the
// fence first, the write, commit, release. A second replica that finds the
// key busy skips its turn.
func ExampleFences_Locked() {
	ctx := context.Background()
	db, cleanup := openExampleDB()
	defer cleanup()
	if err := fencesql.CreateTables(ctx, db, fencesql.SQLite, fencesql.Tables{}); err != nil {
		panic(err)
	}
	if _, err := db.Exec(`CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);
		INSERT INTO accounts VALUES ('alice', 0)`); err != nil {
		panic(err)
	}
	fences, _ := fencesql.NewFences(fencesql.DefaultFenceTable)
	sess, err := fence.NewSession(memlock.New(nil), &fence.SessionOptions{TTL: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)

	credit := func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + 25 WHERE id = 'alice'`)
		return err
	}
	err = fences.Locked(ctx, sess, db, "account:alice", credit, nil)
	fmt.Println("credit:", err == nil)

	// Another replica holds the key: the call runs nothing.
	holder, _ := sess.Lock(ctx, "account:alice", nil)
	err = fences.Locked(ctx, sess, db, "account:alice", credit, nil)
	fmt.Println("busy:", errors.Is(err, fence.ErrHeld))
	_ = holder.Release(ctx)

	var balance int
	_ = db.QueryRow(`SELECT balance FROM accounts WHERE id = 'alice'`).Scan(&balance)
	fmt.Println("balance:", balance)
	// Output:
	// credit: true
	// busy: true
	// balance: 25
}

// The same with pgx: BEGIN and the fence go in one batch, so the fence
// costs no round trip beyond the transaction's own.
func ExampleFences_LockedPgx() {
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
	fences, _ := fencesql.NewFences(fencesql.DefaultFenceTable)

	err = fences.LockedPgx(ctx, sess, pool, "account:alice", func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE accounts SET balance = balance + 25 WHERE id = 'alice'`)
		return err
	}, nil)
	switch {
	case errors.Is(err, fence.ErrHeld): // another replica holds the key: nothing ran
	case errors.Is(err, fence.ErrLeaseLost): // lost before the commit: rolled back
	case errors.Is(err, fence.ErrStaleToken): // a newer holder wrote first: rolled back
	case err != nil: // the write's own error, or fence.ErrUnknownOutcome
	}
}
