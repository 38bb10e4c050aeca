package sql

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
)

// rowQuerier is a database, connection or transaction of either driver
// family, as the fence code reads through it.
type rowQuerier interface {
	queryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error }
}

// querier is a transaction of either driver family, as the fence code
// uses it.
type querier interface {
	rowQuerier
	exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
}

// SQLQueryer is the part of *sql.DB, *sql.Conn and *sql.Tx that
// Fences.Highest uses.
type SQLQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// PgxQueryer is the part of *pgx.Conn, *pgxpool.Pool and pgx.Tx that
// Fences.HighestPgx uses.
type PgxQueryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// sqlRows and pgxRows adapt them.
type (
	sqlRows struct{ db SQLQueryer }
	pgxRows struct{ db PgxQueryer }
)

func (q sqlRows) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error } {
	return q.db.QueryRowContext(ctx, query, args...)
}

func (q pgxRows) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error } {
	return q.db.QueryRow(ctx, query, args...)
}

// sqlTx adapts a database/sql transaction.
type sqlTx struct{ tx *sql.Tx }

func (q sqlTx) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error } {
	return q.tx.QueryRowContext(ctx, query, args...)
}

func (q sqlTx) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// pgxTx adapts a pgx transaction.
type pgxTx struct{ tx pgx.Tx }

func (q pgxTx) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(dest ...any) error } {
	return q.tx.QueryRow(ctx, query, args...)
}

func (q pgxTx) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.tx.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// isNoRows reports whether err says a query returned no row.
func isNoRows(err error) bool {
	return errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows)
}
