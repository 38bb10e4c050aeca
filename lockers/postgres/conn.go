package postgres

import (
	"context"
	"errors"
)

// runner is what the store sends its statements through: a DB of pgx
// (pgxRunner) or a *sql.DB (sqlRunner). Both send the same statements
// with the same Go arguments (strings, integers and, for RenewBatch,
// []string and []int64) and scan into the same destinations (bools,
// time.Time, []int64 and the pgtype types of row.go).
type runner interface {
	// exec runs a statement and returns the number of rows it changed.
	exec(ctx context.Context, query string, args ...any) (int64, error)
	// queryRow runs a statement that returns one row; the row's Scan
	// returns an error matching sql.ErrNoRows when there is none.
	queryRow(ctx context.Context, query string, args ...any) rowScanner
	// listener returns the release listener of a Locker on this runner.
	listener(names notifyNames) *listener
}

// rowScanner is one row of a statement's result.
type rowScanner interface {
	Scan(dest ...any) error
}

// pgxRunner runs the statements on a DB of pgx. pgx.ErrNoRows matches
// sql.ErrNoRows.
type pgxRunner struct{ db DB }

func (r pgxRunner) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := r.db.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (r pgxRunner) queryRow(ctx context.Context, query string, args ...any) rowScanner {
	return r.db.QueryRow(ctx, query, args...)
}

// SQLSTATE codes the store tells apart.
const (
	codeUndefinedTable  = "42P01" // undefined_table
	codeUndefinedSchema = "3F000" // invalid_schema_name
)

// sqlStater is a server error of either driver: pgx's *pgconn.PgError
// and lib/pq's *pq.Error both have this method.
type sqlStater interface {
	error
	SQLState() string
}

// sqlState returns the SQLSTATE of the server error in err's tree, or ""
// when there is none.
func sqlState(err error) string {
	if e, ok := errors.AsType[sqlStater](err); ok {
		return e.SQLState()
	}
	return ""
}
