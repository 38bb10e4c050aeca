// Package accountsdb stands in for the code that sqlc generates (with its
// database/sql output, sql_package left unset) from the schema and queries
// below, so that docs/orms.md can show fence's check inside a sqlc
// transaction without running sqlc. It follows sqlc's layout and
// signatures: a DBTX interface that *sql.DB and *sql.Tx both satisfy, New,
// Queries.WithTx, one method per query.
//
// schema.sql:
//
//	CREATE TABLE accounts (
//	  id      text PRIMARY KEY,
//	  balance bigint NOT NULL
//	);
//
// query.sql:
//
//	-- name: GetAccount :one
//	SELECT id, balance FROM accounts WHERE id = $1;
//
//	-- name: AddToBalance :exec
//	UPDATE accounts SET balance = balance + $2 WHERE id = $1;
package accountsdb

import (
	"context"
	"database/sql"
)

// DBTX is what the queries run on: a *sql.DB, a *sql.Conn or a *sql.Tx.
type DBTX interface {
	ExecContext(context.Context, string, ...interface{}) (sql.Result, error)
	PrepareContext(context.Context, string) (*sql.Stmt, error)
	QueryContext(context.Context, string, ...interface{}) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...interface{}) *sql.Row
}

// New returns the queries over db.
func New(db DBTX) *Queries {
	return &Queries{db: db}
}

// Queries runs the queries of query.sql.
type Queries struct {
	db DBTX
}

// WithTx returns the queries over tx.
func (q *Queries) WithTx(tx *sql.Tx) *Queries {
	return &Queries{
		db: tx,
	}
}
