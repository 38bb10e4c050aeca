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
func ExampleFences_SchemaSQL_mySQL() {
	db, err := sql.Open("mysql", "app@tcp(127.0.0.1:3306)/app") // not reached
	if err != nil {
		panic(err)
	}
	fences, err := fencesql.New(db, fencesql.MySQL, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(fences.SchemaSQL()[0])
	// Output:
	// CREATE TABLE IF NOT EXISTS `fence_tokens` (
	// 	`key` VARBINARY(1024) NOT NULL PRIMARY KEY CHECK (`key` <> ''),
	// 	`token` BIGINT NOT NULL CHECK (`token` > 0)
	// ) ENGINE=InnoDB
}

// A fenced write on MySQL or MariaDB: the fence row of the account and the
// update commit together. The SET clause of a fenced column takes ?
// placeholders. A deadlock (Retryable) runs the transaction again.
func ExampleNew_mySQL() {
	ctx := context.Background()
	db, err := sql.Open("mysql", "app@tcp(127.0.0.1:3306)/app")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	fences, err := fencesql.New(db, fencesql.MySQL, nil)
	if err != nil {
		panic(err)
	}
	accounts, err := fences.Column("accounts", "id", "fence")
	if err != nil {
		panic(err)
	}
	var token fence.Token = 7 // the lease's
	write := func() error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := fences.Check(ctx, tx, "ledger/42", token); err != nil {
			return err
		}
		if err := accounts.Update(ctx, tx, 42, token, "balance = balance + ?", 100); err != nil {
			return err
		}
		return tx.Commit()
	}
	err = write()
	for attempts := 1; fencesql.Retryable(err) && attempts < 5; attempts++ {
		err = write()
	}
	fmt.Println(err)
}
