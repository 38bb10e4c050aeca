package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

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
// back the same way.
type sqlRunner struct{ db *sql.DB }

func (r sqlRunner) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := r.db.ExecContext(ctx, query, sqlArgs(args)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (r sqlRunner) queryRow(ctx context.Context, query string, args ...any) rowScanner {
	return sqlRow{r.db.QueryRowContext(ctx, query, sqlArgs(args)...)}
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
// text of a PostgreSQL array.
func sqlArgs(args []any) []any {
	for i, a := range args {
		switch a := a.(type) {
		case []string:
			args[i] = textArray(a)
		case []int64:
			args[i] = intArray(a)
		}
	}
	return args
}

// textArray returns the text of a PostgreSQL text[] holding elems: each
// element double-quoted, with its backslashes and double quotes escaped,
// so that any string (but one with NUL, which text cannot hold) comes
// back unchanged.
func textArray(elems []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, c := range []byte(e) {
			if c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// intArray returns the text of a PostgreSQL bigint[] holding elems.
func intArray(elems []int64) string {
	b := []byte{'{'}
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, e, 10)
	}
	return string(append(b, '}'))
}

// sqlRow is a row of database/sql, scanned into the store's
// destinations.
type sqlRow struct{ row *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	for i, d := range dest {
		switch d := d.(type) {
		case *pgtype.Timestamptz:
			dest[i] = timestamptzScanner{d}
		case *[]int64:
			dest[i] = intArrayScanner{d}
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

// intArrayScanner scans a bigint[] without NULLs from its text, as
// database/sql drivers give it.
type intArrayScanner struct{ a *[]int64 }

func (s intArrayScanner) Scan(src any) error {
	var text string
	switch src := src.(type) {
	case string:
		text = src
	case []byte:
		text = string(src)
	default:
		return fmt.Errorf("cannot scan %T into a bigint array", src)
	}
	inner, open := strings.CutPrefix(text, "{")
	inner, closed := strings.CutSuffix(inner, "}")
	if !open || !closed {
		return fmt.Errorf("cannot scan %q into a bigint array", text)
	}
	*s.a = (*s.a)[:0]
	if inner == "" {
		return nil
	}
	for e := range strings.SplitSeq(inner, ",") {
		n, err := strconv.ParseInt(e, 10, 64)
		if err != nil {
			return fmt.Errorf("cannot scan %q into a bigint array: %w", text, err)
		}
		*s.a = append(*s.a, n)
	}
	return nil
}
