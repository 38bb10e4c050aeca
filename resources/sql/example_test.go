package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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

// A fence row per account, checked in the application's own transaction:
// the check and the write commit together, or roll back together.
func ExampleFences_Check() {
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
	if _, err := db.Exec(`CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
		INSERT INTO accounts VALUES (42, 0)`); err != nil {
		panic(err)
	}
	credit := func(token fence.Token, amount int) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() // does nothing after the Commit
		if err := fences.Check(ctx, tx, "account/42", token); err != nil {
			return err // stale: nothing of the transaction commits
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = 42`, amount); err != nil {
			return err
		}
		return tx.Commit()
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

// A fenced column on the protected row itself.
func ExampleColumn_Update() {
	ctx := context.Background()
	db, cleanup := openExampleDB()
	defer cleanup()
	fences, err := fencesql.New(db, fencesql.SQLite, nil)
	if err != nil {
		panic(err)
	}
	accounts, err := fences.Column("accounts", "id", "fence")
	if err != nil {
		panic(err)
	}
	if _, err := db.Exec(`CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL, ` + accounts.Definition() + `);
		INSERT INTO accounts (id, balance) VALUES (42, 0)`); err != nil {
		panic(err)
	}
	credit := func(id int64, token fence.Token, amount int) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := accounts.Update(ctx, tx, id, token, "balance = balance + $1", amount); err != nil {
			return err
		}
		return tx.Commit()
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
func ExampleFences_Resource() {
	ctx := context.Background()
	db, cleanup := openExampleDB()
	defer cleanup()
	fences, err := fencesql.New(db, fencesql.SQLite, &fencesql.Options{FenceTable: "report_fences", ValueTable: "reports"})
	if err != nil {
		panic(err)
	}
	store := fences.Resource()
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
func ExampleFences_SchemaSQL() {
	db, err := sql.Open("pgx", "postgres://app@db/app") // not reached
	if err != nil {
		panic(err)
	}
	fences, err := fencesql.New(db, fencesql.PostgreSQL, &fencesql.Options{FenceTable: "app.fences"})
	if err != nil {
		panic(err)
	}
	fmt.Println(fences.SchemaSQL()[0])
	// Output:
	// CREATE TABLE IF NOT EXISTS "app"."fences" (
	// 	key text PRIMARY KEY CHECK (key <> ''),
	// 	token bigint NOT NULL CHECK (token > 0)
	// )
}

// Create makes the fence table (and the value table Resource uses) where
// they are missing, and leaves existing ones alone, so every replica may
// call it at start. Fences.SchemaSQL gives the same statements for your
// own migrations.
func ExampleFences_Create() {
	ctx := context.Background()
	db, cleanup := openExampleDB()
	defer cleanup()
	fences, err := fencesql.New(db, fencesql.SQLite, nil)
	if err != nil {
		panic(err)
	}
	tx, _ := db.BeginTx(ctx, nil)
	err = fences.Check(ctx, tx, "account/42", 1)
	_ = tx.Rollback()
	fmt.Println("before:", errors.Is(err, fence.ErrStoreMissing))

	fmt.Println("create:", fences.Create(ctx))
	fmt.Println("again:", fences.Create(ctx)) // replicas starting together

	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	if err != nil {
		panic(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		_ = rows.Scan(&name)
		fmt.Println("table:", name)
	}
	// Output:
	// before: true
	// create: <nil>
	// again: <nil>
	// table: fence_tokens
	// table: fence_values
}
