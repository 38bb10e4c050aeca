package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// Dialect selects the SQL dialect of the schema statements. The statements
// that check tokens are the same in both dialects.
type Dialect int

const (
	// PostgreSQL 9.5 or later (upsert); tested on 15.
	PostgreSQL Dialect = iota + 1
	// SQLite 3.37 or later (STRICT tables, upsert, RETURNING).
	SQLite
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case PostgreSQL:
		return "PostgreSQL"
	case SQLite:
		return "SQLite"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

func (d Dialect) validate() error {
	if d != PostgreSQL && d != SQLite {
		return &fence.InvalidError{Field: "dialect", Reason: fmt.Sprintf("unknown dialect %d", int(d))}
	}
	return nil
}

// MaxIdentLen is the longest identifier (table or column name, or one part
// of a schema-qualified table name) accepted, in bytes: PostgreSQL's
// limit, beyond which it would silently truncate the name.
const MaxIdentLen = 63

// quoteIdent returns name as a double-quoted identifier, understood by
// PostgreSQL and SQLite alike, or an *fence.InvalidError naming field.
func quoteIdent(field, name string) (string, error) {
	switch {
	case name == "":
		return "", &fence.InvalidError{Field: field, Reason: "empty"}
	case len(name) > MaxIdentLen:
		return "", &fence.InvalidError{Field: field, Reason: fmt.Sprintf("%d bytes, more than the limit of %d", len(name), MaxIdentLen)}
	case !utf8.ValidString(name):
		return "", &fence.InvalidError{Field: field, Reason: "not valid UTF-8"}
	case strings.IndexByte(name, 0) >= 0:
		return "", &fence.InvalidError{Field: field, Reason: "contains a NUL byte"}
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`, nil
}

// quoteTable quotes a table name, "table" or "schema.table". A name cannot
// itself contain a dot.
func quoteTable(field, name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", &fence.InvalidError{Field: field, Reason: fmt.Sprintf("%q has more than one dot; use table or schema.table", name)}
	}
	for i, p := range parts {
		q, err := quoteIdent(field, p)
		if err != nil {
			return "", err
		}
		parts[i] = q
	}
	return strings.Join(parts, "."), nil
}
