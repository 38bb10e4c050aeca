package postgres

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
)

// maxIdentLen is PostgreSQL's identifier limit (NAMEDATALEN - 1). Longer
// names would be truncated silently by the server, so they are refused.
const maxIdentLen = 63

// parseTable splits "table" or "schema.table" into a pgx.Identifier whose
// Sanitize quotes each part.
func parseTable(name string) (pgx.Identifier, error) {
	if name == "" {
		name = DefaultTable
	}
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return nil, &fence.InvalidError{Field: "table", Reason: fmt.Sprintf("%q has more than one '.'; use \"schema.table\"", name)}
	}
	for _, p := range parts {
		reason := ""
		switch {
		case p == "":
			reason = "has an empty part"
		case len(p) > maxIdentLen:
			reason = fmt.Sprintf("has a part longer than %d bytes", maxIdentLen)
		case !utf8.ValidString(p):
			reason = "is not valid UTF-8"
		case strings.IndexByte(p, 0) >= 0:
			reason = "contains a NUL byte"
		}
		if reason != "" {
			return nil, &fence.InvalidError{Field: "table", Reason: fmt.Sprintf("%q %s", name, reason)}
		}
	}
	return pgx.Identifier(parts), nil
}

// SchemaSQL returns the CREATE TABLE IF NOT EXISTS statement of the lease
// table named table ("table" or "schema.table", as Options.Table; empty
// means DefaultTable), for users who apply migrations with their own tools.
// An invalid name gets an error matching fence.ErrInvalid.
func SchemaSQL(table string) (string, error) {
	id, err := parseTable(table)
	if err != nil {
		return "", err
	}
	return schemaSQL(id.Sanitize()), nil
}

// schemaSQL is the lease table. One row per key, never deleted:
//
//   - owner is the owner of the current or last lease;
//   - token is the fencing token of the last acquisition, a counter that
//     Acquire increments and nothing else changes;
//   - expires_at is when the current lease ends on the server's clock, or
//     NULL when the key is free (released or broken).
func schemaSQL(table string) string {
	return `CREATE TABLE IF NOT EXISTS ` + table + ` (
	key        text        PRIMARY KEY,
	owner      text        NOT NULL,
	token      bigint      NOT NULL,
	expires_at timestamptz
)`
}
