package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// openExampleDB opens a new SQLite database in a temporary directory, as
// an application would open its own: WAL mode, a busy timeout, and write
// transactions that take the lock when they begin.
func openExampleDB() (db *sql.DB, cleanup func()) {
	dir, err := os.MkdirTemp("", "fencesql-example")
	if err != nil {
		panic(err)
	}
	db, err = sql.Open("sqlite", "file:"+filepath.Join(dir, "app.db")+
		"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		panic(err)
	}
	return db, func() { db.Close(); os.RemoveAll(dir) }
}

// A fence row per account: the check and the write commit together, in
// one transaction that RunTx retries on conflicts and rolls back on error.
func ExampleFences_Check() {
	ctx := context.Background()
	db, cleanup := openExampleDB()
	defer cleanup()
	if err := fencesql.CreateTables(ctx, db, fencesql.SQLite, fencesql.Tables{}); err != nil {
		panic(err)
	}
	if _, err := db.Exec(`CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
		INSERT INTO accounts VALUES (42, 0)`); err != nil {
		panic(err)
	}
	fences, err := fencesql.NewFences(fencesql.DefaultFenceTable)
	if err != nil {
		panic(err)
	}
	credit := func(token fence.Token, amount int) error {
		return fencesql.RunTx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
			if err := fences.Check(ctx, tx, "account/42", token); err != nil {
				return err // RunTx rolls back
			}
			_, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = 42`, amount)
			return err
		})
	}
	fmt.Println(credit(7, 100)) // the current holder
	fmt.Println(credit(7, 50))  // the same holder again
	err = credit(6, 1000)       // a holder that lost its lease
	fmt.Println(err, errors.Is(err, fence.ErrStaleToken))
	var balance int
	_ = db.QueryRow(`SELECT balance FROM accounts WHERE id = 42`).Scan(&balance)
	fmt.Println("balance:", balance)
	// Output:
	// <nil>
	// <nil>
	// fence/sql: check "account/42": stale token 6 (highest seen 7) true
	// balance: 150
}

// A name's high-water mark, read without a hand-written query.
func ExampleFences_Highest() {
	ctx := context.Background()
	db, cleanup := openExampleDB()
	defer cleanup()
	if err := fencesql.CreateTables(ctx, db, fencesql.SQLite, fencesql.Tables{}); err != nil {
		panic(err)
	}
	fences, err := fencesql.NewFences(fencesql.DefaultFenceTable)
	if err != nil {
		panic(err)
	}
	fmt.Println(fences.Highest(ctx, db, "account/42"))
	_ = fencesql.RunTx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
		return fences.Check(ctx, tx, "account/42", 7)
	})
	fmt.Println(fences.Highest(ctx, db, "account/42"))
	// Output:
	// 0 <nil>
	// 7 <nil>
}

// A fenced column on the protected row itself.
func ExampleColumn_Update() {
	ctx := context.Background()
	db, cleanup := openExampleDB()
	defer cleanup()
	col, _ := fencesql.ColumnDefinition("fence")
	if _, err := db.Exec(`CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL, ` + col + `);
		INSERT INTO accounts (id, balance) VALUES (42, 0)`); err != nil {
		panic(err)
	}
	accounts, err := fencesql.NewColumn("accounts", "id", "fence")
	if err != nil {
		panic(err)
	}
	credit := func(id int64, token fence.Token, amount int) error {
		return fencesql.RunTx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
			return accounts.Update(ctx, tx, id, token, "balance = balance + $1", amount)
		})
	}
	fmt.Println(credit(42, 3, 100))
	fmt.Println(credit(42, 2, 100))
	fmt.Println(credit(43, 3, 100))
	var balance, token int
	_ = db.QueryRow(`SELECT balance, fence FROM accounts WHERE id = 42`).Scan(&balance, &token)
	fmt.Println("balance:", balance, "token:", token)
	// Output:
	// <nil>
	// fence/sql: update "accounts/42": stale token 2 (highest seen 3)
	// fence/sql: update "accounts/43": not found
	// balance: 100 token: 3
}

// The portable form: a fence.Resource on SQLite.
func ExampleResource() {
	ctx := context.Background()
	db, cleanup := openExampleDB()
	defer cleanup()
	tables := fencesql.Tables{Fence: "report_fences", Value: "reports"}
	store, err := fencesql.NewResource(db, fencesql.SQLite, tables)
	if err != nil {
		panic(err)
	}
	if err := store.Create(ctx); err != nil {
		panic(err)
	}
	fmt.Println(store.Put(ctx, "daily", 5, []byte("v1")))
	fmt.Println(store.Delete(ctx, "daily", 6))
	fmt.Println(store.Put(ctx, "daily", 5, []byte("stale re-create")))
	_, _, err = store.Get(ctx, "daily")
	fmt.Println(err)
	highest, _ := store.Highest(ctx, "daily")
	fmt.Println("highest:", highest)
	// Output:
	// <nil>
	// <nil>
	// fence/sql: put "daily": stale token 5 (highest seen 6)
	// fence/sql: get "daily": not found (deleted)
	// highest: 6
}

// The schema for your own migrations.
func ExampleSchemaSQL() {
	stmts, err := fencesql.SchemaSQL(fencesql.PostgreSQL, fencesql.Tables{Fence: "app.fences"})
	if err != nil {
		panic(err)
	}
	fmt.Println(stmts[0])
	// Output:
	// CREATE TABLE IF NOT EXISTS "app"."fences" (
	// 	key text PRIMARY KEY CHECK (key <> ''),
	// 	token bigint NOT NULL CHECK (token > 0)
	// )
}

// The fence pipelined with a ledger write: one batch begins the
// transaction, checks the token and writes; a stale token makes the server
// skip the writes. The fence adds no round trip.
func ExampleFences_QueueCheck() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	fences, _ := fencesql.NewFences(fencesql.DefaultFenceTable)
	var token fence.Token = 7 // from the lease

	conn, err := pool.Acquire(ctx)
	if err != nil {
		panic(err)
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	if err := fences.QueueCheck(b, "account/42", token); err != nil {
		panic(err)
	}
	b.Queue(`UPDATE accounts SET balance = balance + $1 WHERE id = $2`, 100, 42)
	b.Queue(`INSERT INTO entries (account, amount) VALUES ($1, $2)`, 42, 100)
	br := conn.SendBatch(ctx, b)
	err = br.Close()
	tx := br.Tx()
	if err != nil {
		_ = tx.Rollback(ctx)
		fmt.Println(err, errors.Is(err, fence.ErrStaleToken))
		return
	}
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
}
