package sql

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fencekit/fence"
)

// Column fences writes with a token column on the protected rows
// themselves (fenced-column mode): each row records the highest token that
// wrote it. Declare the column as Definition says. Get a Column from
// Fences.Column; it is safe for concurrent use and holds no connection.
//
// Deleting a row with a plain DELETE loses its token, so a stale writer
// could re-create it. Delete such rows softly, with an Update that sets a
// deleted flag, or fence them with a fence row (Fences.Check), which a
// delete leaves in place.
type Column[Tx any] struct {
	conn              conn[Tx]
	dialect           Dialect
	table, key, fence string // quoted
	name              string // table as given, for messages
	fenceName         string // fence column as given
}

// Column returns the fenced-column writer for table, whose rows are
// identified by keyColumn (unique: a primary key) and carry their token in
// fenceColumn. Names are quoted and used exactly as written; a table may
// be schema-qualified ("app.accounts").
func (f *Fences[Tx]) Column(table, keyColumn, fenceColumn string) (*Column[Tx], error) {
	d := f.dialect
	t, err := d.quoteTable("table", table)
	if err != nil {
		return nil, err
	}
	k, err := d.quote("key column", keyColumn)
	if err != nil {
		return nil, err
	}
	fc, err := d.quote("fence column", fenceColumn)
	if err != nil {
		return nil, err
	}
	return &Column[Tx]{conn: f.conn, dialect: d, table: t, key: k, fence: fc, name: table, fenceName: fenceColumn}, nil
}

// Definition returns the definition of the fence column, for CREATE TABLE
// or ALTER TABLE ... ADD COLUMN:
//
//	"fence" bigint NOT NULL DEFAULT 0 CHECK ("fence" >= 0)
//
// and in MySQL
//
//	`fence` BIGINT NOT NULL DEFAULT 0 CHECK (`fence` >= 0)
//
// 0 means "never written under a token"; every valid token passes it.
func (c *Column[Tx]) Definition() string {
	if c.dialect == MySQL {
		return c.fence + " BIGINT NOT NULL DEFAULT 0 CHECK (" + c.fence + " >= 0)"
	}
	return c.fence + " bigint NOT NULL DEFAULT 0 CHECK (" + c.fence + " >= 0)"
}

// updateSQL returns the statement Update runs for a SET clause with nargs
// arguments: the caller's arguments are $1..$nargs, the key is $nargs+1
// and the token $nargs+2.
//
//	UPDATE t SET <set>, fence = $nargs+2
//	WHERE key = $nargs+1 AND fence >= 0 AND fence <= $nargs+2
//
// In MySQL the placeholders are ?: set's nargs, then the token, the key
// and the token again.
//
//	UPDATE t SET <set>, fence = ?
//	WHERE key = ? AND fence >= 0 AND fence <= ?
//
// MySQL runs the assignments left to right, each seeing the values set
// before it; the fence's comes last, so set sees the row's old token.
func (c *Column[Tx]) updateSQL(set string, nargs int) (string, error) {
	if nargs < 0 {
		return "", &fence.InvalidError{Field: "args", Reason: "negative count"}
	}
	if err := checkSet(c.dialect, set, nargs); err != nil {
		return "", err
	}
	if err := checkAssignments(c.dialect, set, c.fenceName); err != nil {
		return "", err
	}
	k, t := "$"+strconv.Itoa(nargs+1), "$"+strconv.Itoa(nargs+2)
	if c.dialect == MySQL {
		k, t = "?", "?"
	}
	assign := c.fence + " = " + t
	if set != "" {
		assign = set + "\n, " + assign
	}
	return "UPDATE " + c.table + " SET " + assign +
		"\nWHERE " + c.key + " = " + k + " AND " + c.fence + " >= 0 AND " + c.fence + " <= " + t, nil
}

// Update applies, in the transaction tx, the assignments in set to the
// row whose key is key, if token is at least the row's fence token, and
// records token there, in one conditional statement:
//
//	UPDATE t SET <set>, fence = <token> WHERE key = <key> AND fence >= 0 AND fence <= <token>
//
// set is a comma-separated list of assignments ("balance = balance + $1,
// note = $2"; in MySQL with ? placeholders, exactly one per argument) that
// refers to args as $1, $2, ...; each assigns a column (or a
// parenthesised list of columns) other than the fence column, which is
// recognised without regard to ASCII case. An empty set only advances the
// token. An error matching fence.ErrInvalid refuses, before anything is
// sent, a set that assigns the fence column, that is not such a list, or
// that could reach beyond the assignments (a semicolon, a comment, a
// WHERE, a placeholder other than $1..$len(args); in MySQL a # or a $);
// and, from the database, a set whose expressions are not valid SQL (a
// syntax error).
//
// Errors come in a *fence.OpError whose key is the table and the row's
// key ("fence/sql: update "accounts/42": ..."). A lower token gets a
// *fence.StaleTokenError with the row's token; a missing row a
// *fence.NotFoundError; a fence column holding NULL or a negative value a
// *fence.CorruptError. On any error, roll tx back.
func (c *Column[Tx]) Update(ctx context.Context, tx Tx, key any, token fence.Token, set string, args ...any) error {
	if c.conn.isNil(tx) {
		return opError("update", c.resource(key), errNilTx)
	}
	return opError("update", c.resource(key), c.update(ctx, c.conn.wrap(tx), key, token, set, args))
}

// resource names the row of key in errors: "accounts/42".
func (c *Column[Tx]) resource(key any) string {
	if key == nil {
		return c.name
	}
	return c.name + "/" + fmt.Sprint(key)
}

// attempts bounds the re-tries of Update when its row appeared between the
// update and the re-read (a concurrent insert under READ COMMITTED).
const attempts = 3

func (c *Column[Tx]) update(ctx context.Context, q querier, key any, token fence.Token, set string, args []any) error {
	if key == nil {
		return &fence.InvalidError{Field: "key", Reason: "nil"}
	}
	if err := validToken(token); err != nil {
		return err
	}
	stmt, err := c.updateSQL(set, len(args))
	if err != nil {
		return err
	}
	resource := c.resource(key)
	all := append(append(make([]any, 0, len(args)+3), args...), key, int64(token))
	reread := "SELECT " + c.fence + " FROM " + c.table + " WHERE " + c.key + " = $1"
	if c.dialect == MySQL {
		all = append(append(make([]any, 0, len(args)+3), args...), int64(token), key, int64(token))
		reread = "SELECT " + c.fence + " FROM " + c.table + " WHERE " + c.key + " = ? FOR UPDATE"
	}
	locked := false // MySQL: the re-read holds the row's lock
	for range attempts {
		n, err := q.exec(ctx, stmt, all...)
		if isSyntaxError(err) {
			// The statement around set is fixed and valid: the caller's
			// assignments are not.
			return fmt.Errorf("%w (%w)", &fence.InvalidError{Field: "set clause", Reason: fmt.Sprintf("%q is not valid SQL", set)}, err)
		}
		if err != nil {
			return storeMissing(err)
		}
		if n > 0 || locked {
			// Matched. In MySQL a count of 0 with the row locked by the
			// re-read, whose token passed, is a row that matched and that
			// the update left as it was (the same token and values):
			// MySQL counts changed rows.
			return nil
		}
		// Nothing matched (or, in MySQL, nothing changed): no such row,
		// or its token is higher (or corrupt).
		var stored any
		err = q.queryRow(ctx, reread, key).Scan(&stored)
		if isNoRows(err) {
			return &fence.NotFoundError{Key: resource}
		}
		if err != nil {
			return fmt.Errorf("reading the token back: %w", err)
		}
		if h, ok := asInt64(stored); ok && h >= 0 && h <= int64(token) {
			// The row appeared after the update looked, or (MySQL) the
			// update changed nothing: try again; in MySQL the row is
			// locked now, so the update matches it.
			locked = c.dialect == MySQL
			continue
		}
		if h, ok := asInt64(stored); ok && h > int64(token) {
			return &fence.StaleTokenError{Key: resource, Token: token, Highest: fence.Token(h)}
		}
		return &fence.CorruptError{Key: resource, Reason: "fence column holds " + describe(stored) + ", not a token"}
	}
	return errors.New("the row kept changing under the update; retry the transaction")
}

// isSyntaxError reports whether err is the database refusing a statement
// it cannot parse: PostgreSQL's SQLSTATE 42601, SQLite's SQLITE_ERROR
// saying "syntax error" or "incomplete input", MySQL's ER_PARSE_ERROR
// (1064).
func isSyntaxError(err error) bool {
	if err == nil {
		return false
	}
	if n, ok := mysqlErrno(err); ok {
		return n == erParse
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "42601"
	}
	var code interface{ Code() int }
	if errors.As(err, &code) && code.Code()&0xff == 1 {
		msg := err.Error()
		return strings.Contains(msg, "syntax error") || strings.Contains(msg, "incomplete input")
	}
	return false
}
