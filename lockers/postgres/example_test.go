package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/postgres"
)

// The lease table is created once; each job then takes the key, does its
// work with the lease's token (pass it to a fenced resource), and releases.
// It needs a server, so it only compiles here.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	locker, err := postgres.New(pool, &postgres.Options{Table: "app.fence_locks"})
	if err != nil {
		log.Fatal(err)
	}
	if err := locker.Create(ctx); err != nil { // or postgres.SchemaSQL in a migration
		log.Fatal(err)
	}

	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	var held *fence.HeldError
	if errors.As(err, &held) {
		fmt.Printf("busy: %s holds token %d until %v\n", held.Owner, held.Token, held.ValidUntil)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writing with token", lease.Token)
	if err := locker.Release(ctx, lease); err != nil && !errors.Is(err, fence.ErrNotHeld) {
		log.Fatal(err)
	}
}

// A program on database/sql passes its *sql.DB, here with pgx's driver,
// which also lets a waiting Lock wake at once on a release (lib/pq works
// too: sql.Open("postgres", ...), and Lock then polls).
// It needs a server, so it only compiles here.
func ExampleNewSQL() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL")) // import _ "github.com/jackc/pgx/v5/stdlib"
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	locker, err := postgres.NewSQL(db, &postgres.Options{Table: "app.fence_locks"})
	if err != nil {
		log.Fatal(err)
	}
	// Close stops the locker's listening connection; db stays open.
	defer locker.Close()

	if err := locker.Create(ctx); err != nil { // or postgres.SchemaSQL in a migration
		log.Fatal(err)
	}

	sess, err := fence.NewSession(locker, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx) //nolint:errcheck // releases what is still held
	h, err := sess.Lock(ctx, "nightly-report", &fence.LockOptions{Wait: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release(ctx) //nolint:errcheck // a lost lease has nothing to release
	fmt.Println("writing with token", h.Token())
}

// Importing the package lets fence.OpenLocker open PostgreSQL by URL; the
// table parameter is fence's, the rest is pgx's connection string, with
// credentials from libpq's environment (PGPASSWORD, PGPASSFILE).
// It needs a server, so it only compiles here.
func Example_openLocker() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "postgres://app@db.internal/app?table=ops.fence_locks&sslmode=verify-full", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close() // closes the pool the opener made
	if err := locker.Create(ctx); err != nil {
		log.Fatal(err)
	}
	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writing with token", lease.Token)
	if err := locker.Release(ctx, lease); err != nil && !errors.Is(err, fence.ErrNotHeld) {
		log.Fatal(err)
	}
}

// SchemaSQL gives the table's DDL to a migration tool.
func ExampleSchemaSQL() {
	ddl, err := postgres.SchemaSQL("fence_locks")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ddl)
	// Output:
	// CREATE TABLE IF NOT EXISTS "fence_locks" (
	// 	key         text        PRIMARY KEY,
	// 	owner       text        NOT NULL,
	// 	token       bigint      NOT NULL,
	// 	expires_at  timestamptz,
	// 	value       text,
	// 	value_token bigint
	// )
}

// AddValueSQL gives a migration tool the statement that brings a lease
// table made by an earlier version up to date.
func ExampleAddValueSQL() {
	ddl, err := postgres.AddValueSQL("fence_locks")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ddl)
	// Output:
	// ALTER TABLE "fence_locks" ADD COLUMN IF NOT EXISTS value text, ADD COLUMN IF NOT EXISTS value_token bigint
}

// Work done inside one transaction can be fenced by the transaction
// itself: the advisory lock ends with it.
func ExampleTryXactLock() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	ok, err := postgres.TryXactLock(ctx, tx, "ledger/rebalance")
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		fmt.Println("another transaction is rebalancing")
		return
	}
	// ... the work, in tx ...
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}
}

// The Locker's As reaches the pool under it, here the one a URL opener
// made, for the application's own statements.
// It needs a server, so it only compiles here.
func Example_as() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "postgres://app@db.internal/app?sslmode=verify-full", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	var pool *pgxpool.Pool
	if !locker.As(&pool) {
		log.Fatal("not a locker on a pgx pool")
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM fence_locks WHERE expires_at > now()").Scan(&n); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "keys held")
}
