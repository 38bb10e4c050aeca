package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// Dialect selects the SQL dialect of the statements. PostgreSQL and
// SQLite share the statements that check tokens ($n placeholders, double
// quotes, INSERT .. ON CONFLICT .. RETURNING) and differ in the schema;
// MySQL has statements of its own (see MySQL).
type Dialect int

const (
	// PostgreSQL 9.5 or later (upsert); tested on 15.
	PostgreSQL Dialect = iota + 1
	// SQLite 3.37 or later (STRICT tables, upsert, RETURNING).
	SQLite
	// MySQL is MariaDB 10.5 or later and MySQL 8.0.16 or later (CHECK
	// constraints enforced), through github.com/go-sql-driver/mysql;
	// tested on MariaDB 10.11, unverified on MySQL 8, which no test here
	// runs. Its statements quote names with backquotes (at most
	// MaxMySQLIdentLen bytes), take ? placeholders and create InnoDB
	// tables whose keys are VARBINARY(MaxKeyLen): compared byte for byte,
	// as in the other dialects, where a utf8mb4 column would fold case and
	// trailing spaces, and short enough for InnoDB's 3072-byte index
	// limit.
	//
	// What differs on MySQL: the fence upsert is INSERT .. ON DUPLICATE
	// KEY UPDATE with VALUES(), which MariaDB and MySQL 8 both take (MySQL
	// 8.0.20 deprecates VALUES() in favour of row aliases, which MariaDB
	// lacks), followed by a SELECT .. FOR UPDATE of the row in the same
	// transaction, because MySQL 8 has no RETURNING and the affected-rows
	// count cannot tell a stale token from a rewrite of the same token;
	// the locking read sees the latest committed token even under
	// InnoDB's default REPEATABLE READ, where a plain SELECT could read an
	// older snapshot. Column.Update does not trust the affected-rows count
	// either (MySQL counts changed rows, not matched ones, unless the
	// client sets CLIENT_FOUND_ROWS): a zero count is settled by a locking
	// read of the row. Deadlocks (error 1213) and lock wait timeouts
	// (1205) are retried by RunTx.
	MySQL
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case PostgreSQL:
		return "PostgreSQL"
	case SQLite:
		return "SQLite"
	case MySQL:
		return "MySQL"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

func (d Dialect) validate() error {
	if d != PostgreSQL && d != SQLite && d != MySQL {
		return &fence.InvalidError{Field: "dialect", Reason: fmt.Sprintf("unknown dialect %d", int(d))}
	}
	return nil
}

// MaxIdentLen is the longest identifier (table or column name, or one part
// of a schema-qualified table name) accepted, in bytes: PostgreSQL's
// limit, beyond which it would silently truncate the name.
const MaxIdentLen = 63

// MaxMySQLIdentLen is the longest identifier accepted in the MySQL
// dialect, in bytes: MySQL's limit is 64 characters.
const MaxMySQLIdentLen = 64

// maxIdentLen is the identifier limit of d.
func (d Dialect) maxIdentLen() int {
	if d == MySQL {
		return MaxMySQLIdentLen
	}
	return MaxIdentLen
}

// quoteIdent returns name as a double-quoted identifier, understood by
// PostgreSQL and SQLite alike, or an *fence.InvalidError naming field.
func quoteIdent(field, name string) (string, error) {
	return quoteIdentIn(PostgreSQL, field, name)
}

// quoteIdentIn returns name quoted for dialect d: in backquotes for
// MySQL, in double quotes otherwise.
func quoteIdentIn(d Dialect, field, name string) (string, error) {
	switch limit := d.maxIdentLen(); {
	case name == "":
		return "", &fence.InvalidError{Field: field, Reason: "empty"}
	case len(name) > limit:
		return "", &fence.InvalidError{Field: field, Reason: fmt.Sprintf("%d bytes, more than the limit of %d", len(name), limit)}
	case !utf8.ValidString(name):
		return "", &fence.InvalidError{Field: field, Reason: "not valid UTF-8"}
	case strings.IndexByte(name, 0) >= 0:
		return "", &fence.InvalidError{Field: field, Reason: "contains a NUL byte"}
	}
	if d == MySQL {
		return "`" + strings.ReplaceAll(name, "`", "``") + "`", nil
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`, nil
}

// quoteTable quotes a table name, "table" or "schema.table". A name cannot
// itself contain a dot.
func quoteTable(field, name string) (string, error) {
	return quoteTableIn(PostgreSQL, field, name)
}

// quoteTableIn quotes a table name for dialect d; in MySQL the schema is
// the database.
func quoteTableIn(d Dialect, field, name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", &fence.InvalidError{Field: field, Reason: fmt.Sprintf("%q has more than one dot; use table or schema.table", name)}
	}
	for i, p := range parts {
		q, err := quoteIdentIn(d, field, p)
		if err != nil {
			return "", err
		}
		parts[i] = q
	}
	return strings.Join(parts, "."), nil
}
