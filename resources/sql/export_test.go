package sql

import (
	"context"
	"database/sql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/sql/internal/ident"
)

// The identifier limits, for the tests of names.
const (
	MaxIdentLen      = ident.MaxLen
	MaxMySQLIdentLen = ident.MaxMySQLLen
)

// ConflictError is the error of a transaction given up after conflicts.
type ConflictError = conflictError

// InTx runs fn in a transaction of f's database begun at iso, retried on
// conflicts and rolled back on error or panic, as Run runs its attempts
// without the fence; its own errors (a failed BEGIN or COMMIT, conflicts
// given up on) come in a *fence.OpError for operation "transaction".
func InTx[Tx any](ctx context.Context, f *Fences[Tx], iso sql.IsolationLevel, fn func(ctx context.Context, tx Tx) error) error {
	err := f.conn.runTx(ctx, iso, fn)
	switch err.(type) {
	case *beginError, *commitError, *conflictError:
		return &fence.OpError{Backend: backendName, Op: "transaction", Err: err}
	}
	return err
}

// UpdateSQL returns the statement Column.Update runs for a SET clause
// with nargs arguments.
func UpdateSQL[Tx any](c *Column[Tx], set string, nargs int) (string, error) {
	return c.updateSQL(set, nargs)
}

// MySQLErrno is mysqlErrno.
var MySQLErrno = mysqlErrno
