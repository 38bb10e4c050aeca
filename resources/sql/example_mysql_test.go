package sql_test

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/go-sql-driver/mysql" // the "mysql" database/sql driver

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// The MySQL schema: InnoDB tables keyed by bytes, for users who run their
// own migrations.
func ExampleSchemaSQL_mySQL() {
	stmts, err := fencesql.SchemaSQL(fencesql.MySQL, fencesql.Tables{})
	if err != nil {
		panic(err)
	}
	fmt.Println(stmts[0])
	// Output:
	// CREATE TABLE IF NOT EXISTS `fence_tokens` (
	// 	`key` VARBINARY(1024) NOT NULL PRIMARY KEY CHECK (`key` <> ''),
	// 	`token` BIGINT NOT NULL CHECK (`token` > 0)
	// ) ENGINE=InnoDB
}

// A fenced write on MySQL or MariaDB: the fence row of the account and the
// update commit together; RunTx runs the transaction again after a
// deadlock. The SET clause of a fenced column takes ? placeholders.
func ExampleNewFencesFor() {
	ctx := context.Background()
	db, err := sql.Open("mysql", "app@tcp(127.0.0.1:3306)/app")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	fences, err := fencesql.NewFencesFor(fencesql.MySQL, fencesql.DefaultFenceTable)
	if err != nil {
		panic(err)
	}
	accounts, err := fencesql.NewColumnFor(fencesql.MySQL, "accounts", "id", "fence")
	if err != nil {
		panic(err)
	}
	var token fence.Token = 7 // the lease's
	err = fencesql.RunTx(ctx, db, nil, func(ctx context.Context, tx *sql.Tx) error {
		if err := fences.Check(ctx, tx, "ledger/42", token); err != nil {
			return err // stale: RunTx rolls back
		}
		return accounts.Update(ctx, tx, 42, token, "balance = balance + ?", 100)
	})
	fmt.Println(err)
}
