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
//     NULL when the key is free (released or broken);
//   - value is the value published with the lease of token value_token,
//     in base64 (Publish), NULL when none.
func schemaSQL(table string) string {
	return `CREATE TABLE IF NOT EXISTS ` + table + ` (
	key         text        PRIMARY KEY,
	owner       text        NOT NULL,
	token       bigint      NOT NULL,
	expires_at  timestamptz,
	value       text,
	value_token bigint
)`
}

// addValueSQL is the PL/pgSQL statement that adds the value columns to
// a lease table made without them (by an earlier version), and does
// nothing when the table has them, without taking the table's lock then.
// It runs in Create's block, after the CREATE TABLE.
func addValueSQL(table string) string {
	literal := "'" + strings.ReplaceAll(table, "'", "''") + "'"
	return `IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = ` + literal + `::regclass
		AND attname = 'value_token' AND NOT attisdropped) THEN
	ALTER TABLE ` + table + ` ADD COLUMN IF NOT EXISTS value text, ADD COLUMN IF NOT EXISTS value_token bigint;
END IF`
}

// AddValueSQL returns the statement that adds the columns of published
// values (value and value_token, see Publish in the package doc) to a
// lease table created without them, for users who apply migrations with
// their own tools; Create adds them itself. An invalid name gets an
// error matching fence.ErrInvalid.
func AddValueSQL(table string) (string, error) {
	id, err := parseTable(table)
	if err != nil {
		return "", err
	}
	return `ALTER TABLE ` + id.Sanitize() + ` ADD COLUMN IF NOT EXISTS value text, ADD COLUMN IF NOT EXISTS value_token bigint`, nil
}
