package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fencekit/fence"
)

// NewSQL is New on a *sql.DB whose driver is pgx's
// (github.com/jackc/pgx/v5/stdlib) or lib/pq (github.com/lib/pq): the same
// lease table, statements, options, errors and Create. What differs is
// how a Session.Lock waits (see "Release notifications" in the package
// doc): with pgx's driver the Locker opens its own listening connection
// from the configuration of one of db's connections, on the first wait;
// with any other driver it cannot listen, and Lock polls
// (fence.SessionOptions.PollInterval).
//
// The Locker's As gives db to a **sql.DB. Its Close stops the listening
// connection, if any, and does not close db.
//
// A program that calls lib/pq's EnableInfinityTs has it read an infinite
// expires_at (which only a hand edit writes) as the time it chose, not as
// the fence.ErrCorrupt reported otherwise (untested; from lib/pq's
// documentation).
func NewSQL(db *sql.DB, opts *Options) (*fence.Locker, error) {
	if db == nil {
		return nil, &fence.InvalidError{Field: "db", Reason: "nil"}
	}
	l, _, err := newLocker(sqlRunner{db}, opts, nil)
	return l, err
}

// sqlRunner runs the statements on a *sql.DB. database/sql passes
// neither []string nor []int64 to every driver, nor scans an array, so
// the arrays of RenewBatch travel as the text of a PostgreSQL array
// (which the statement casts, as it does the arrays of pgx) and come
// back the same way, written and read by pgx's pgtype.
type sqlRunner struct{ db *sql.DB }

func (r sqlRunner) exec(ctx context.Context, query string, args ...any) (int64, error) {
	args, err := sqlArgs(args)
	if err != nil {
		return 0, err
	}
	res, err := r.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (r sqlRunner) queryRow(ctx context.Context, query string, args ...any) rowScanner {
	args, err := sqlArgs(args)
	if err != nil {
		return errRow{err}
	}
	return sqlRow{r.db.QueryRowContext(ctx, query, args...)}
}

// listener returns a listener that opens its connections from the
// configuration of one of db's connections, found on the first wait,
// when they are pgx's; otherwise it cannot listen.
func (r sqlRunner) listener(names notifyNames) *listener {
	l := newListener(names)
	l.find = func(ctx context.Context) (*pgx.ConnConfig, error) {
		c, err := r.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		var cfg *pgx.ConnConfig
		err = c.Raw(func(dc any) error {
			pc, ok := dc.(interface{ Conn() *pgx.Conn }) // *stdlib.Conn
			if !ok {
				return fmt.Errorf("release notifications need pgx's database/sql driver (github.com/jackc/pgx/v5/stdlib), not %T: %w", dc, errors.ErrUnsupported)
			}
			cfg = pc.Conn().Config() // a copy
			return nil
		})
		return cfg, err
	}
	return l
}

// sqlArgs returns args with each []string and []int64 replaced by the
// text of a PostgreSQL array (text[] or bigint[]), as pgtype writes it.
func sqlArgs(args []any) ([]any, error) {
	var m *pgtype.Map
	for i, a := range args {
		var oid uint32
		switch a.(type) {
		case []string:
			oid = pgtype.TextArrayOID
		case []int64:
			oid = pgtype.Int8ArrayOID
		default:
			continue
		}
		if m == nil {
			m = pgtype.NewMap()
		}
		b, err := m.Encode(oid, pgtype.TextFormatCode, a, nil)
		if err != nil {
			return nil, err
		}
		args[i] = string(b)
	}
	return args, nil
}

// errRow is a row whose statement was not sent: its Scan returns err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// sqlRow is a row of database/sql, scanned into the store's
// destinations.
type sqlRow struct{ row *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	for i, d := range dest {
		switch d := d.(type) {
		case *pgtype.Timestamptz:
			dest[i] = timestamptzScanner{d}
		case *[]int64: // a bigint[], from its text
			dest[i] = pgtype.NewMap().SQLScanner(d)
		}
	}
	return r.row.Scan(dest...)
}

// timestamptzScanner scans a timestamptz as pgtype.Timestamptz does, and
// also from bytes: lib/pq gives an infinite timestamp as the bytes
// "infinity" or "-infinity".
type timestamptzScanner struct{ t *pgtype.Timestamptz }

func (s timestamptzScanner) Scan(src any) error {
	if b, ok := src.([]byte); ok {
		src = string(b)
	}
	return s.t.Scan(src)
}
