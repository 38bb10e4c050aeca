// Command quickstart credits an account under a lease: one SQL write that
// a replica holding a stale lease can never apply.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/postgres"
	fencesql "github.com/fencekit/fence/resources/sql"
)

func main() {
	url := cmp.Or(os.Getenv("DATABASE_URL"), os.Getenv("FENCE_POSTGRES_URL"))
	if url == "" {
		fmt.Fprintln(os.Stderr, "quickstart: set DATABASE_URL to a PostgreSQL URL, such as postgres://app@localhost/app")
		os.Exit(2)
	}
	if err := run(context.Background(), url); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run credits alice with 25 under a lease on "account:alice".
func run(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	locker, err := postgres.New(pool, nil) // leases in the table fence_locks
	if err != nil {
		return err
	}
	fences, err := fencesql.NewPgx(pool, nil) // tokens in the table fence_tokens
	if err != nil {
		return err
	}
	if err := createTables(ctx, pool, locker, fences); err != nil {
		return err
	}
	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 10 * time.Second})
	if err != nil {
		return err
	}
	defer sess.Close(ctx)

	// Lock, begin, check the lease's token first, write, commit, release.
	err = guard.Run(ctx, sess, "account:alice", func(ctx context.Context, h *fence.Handle) error {
		return fences.Run(ctx, h, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "UPDATE accounts SET balance = balance + 25 WHERE id = 'alice'")
			return err
		}, nil)
	}, nil) // nil: try once; &fence.LockOptions{Wait: d} waits
	switch {
	case errors.Is(err, fence.ErrHeld):
		fmt.Println("another replica holds account:alice: skipped")
	case errors.Is(err, fence.ErrLeaseLost):
		fmt.Println("the lease was lost before the commit: rolled back")
	case errors.Is(err, fence.ErrStaleToken):
		fmt.Println("a newer holder has written: rolled back")
	case err != nil:
		return err // the write's own error, or fence.ErrUnknownOutcome: the commit's answer was lost
	default:
		fmt.Println("credited alice with 25")
	}
	return nil
}

// createTables creates the lease table, the fence table and the accounts,
// unless they exist. Replicas may run it at once.
func createTables(ctx context.Context, pool *pgxpool.Pool, locker *fence.Locker, fences *fencesql.Fences[pgx.Tx]) error {
	if err := locker.Create(ctx); err != nil { // or postgres.SchemaSQL in a migration
		return err
	}
	if err := fences.Create(ctx); err != nil { // or fences.SchemaSQL()
		return err
	}
	// One implicit transaction, under an advisory lock: replicas starting
	// together create the table one after the other.
	_, err := pool.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('create accounts'));
		CREATE TABLE IF NOT EXISTS accounts (id text PRIMARY KEY, balance bigint NOT NULL);
		INSERT INTO accounts VALUES ('alice', 0) ON CONFLICT DO NOTHING`)
	return err
}
