package mysql

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fencekit/fence"
)

// maxIdentLen is MySQL's identifier limit for databases and tables, in
// characters.
const maxIdentLen = 64

// parseTable checks "table" or "db.table" and returns it quoted with
// backticks.
func parseTable(name string) (string, error) {
	if name == "" {
		name = DefaultTable
	}
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", &fence.InvalidError{Field: "table", Reason: fmt.Sprintf("%q has more than one '.'; use \"db.table\"", name)}
	}
	quoted := make([]string, len(parts))
	for i, p := range parts {
		reason := ""
		switch {
		case p == "":
			reason = "has an empty part"
		case !utf8.ValidString(p):
			reason = "is not valid UTF-8"
		case utf8.RuneCountInString(p) > maxIdentLen:
			reason = fmt.Sprintf("has a part longer than %d characters", maxIdentLen)
		case strings.ContainsAny(p, "\x00`"):
			reason = "contains a NUL byte or a backtick"
		case strings.HasSuffix(p, " "):
			reason = "has a part ending in a space"
		}
		if reason != "" {
			return "", &fence.InvalidError{Field: "table", Reason: fmt.Sprintf("%q %s", name, reason)}
		}
		quoted[i] = "`" + p + "`"
	}
	return strings.Join(quoted, "."), nil
}

// AddValueSQL returns the statement that adds the columns of published
// values (value and value_token, see Publish in the package doc) to a
// lease table created without them, for users who apply migrations with
// their own tools; Create adds them itself. An invalid name gets an
// error matching fence.ErrInvalid.
func AddValueSQL(table string) (string, error) {
	quoted, err := parseTable(table)
	if err != nil {
		return "", err
	}
	return buildQueries(quoted).addValue, nil
}

// SchemaSQL returns the CREATE TABLE IF NOT EXISTS statement of the lease
// table named table ("table" or "db.table", as Options.Table; empty means
// DefaultTable), for users who apply migrations with their own tools. An
// invalid name gets an error matching fence.ErrInvalid.
func SchemaSQL(table string) (string, error) {
	quoted, err := parseTable(table)
	if err != nil {
		return "", err
	}
	return schemaSQL(quoted), nil
}

// schemaSQL is the lease table (see the package doc). One row per key,
// never deleted:
//
//   - owner is the owner of the current or last lease;
//   - token is the fencing token of the last acquisition, a counter that
//     Acquire increments and nothing else changes;
//   - expires_at is when the current lease ends, UTC on the server's
//     clock, or NULL when the key is free (released or broken);
//   - value is the value published with the lease of token value_token
//     (Publish), NULL when none.
func schemaSQL(table string) string {
	return "CREATE TABLE IF NOT EXISTS " + table + ` (
	` + "`key`" + `      VARBINARY(1024) NOT NULL,
	owner       VARBINARY(1024) NOT NULL,
	token       BIGINT          NOT NULL,
	expires_at  DATETIME(6)     NULL,
	value       VARBINARY(512)  NULL,
	value_token BIGINT          NULL,
	PRIMARY KEY (` + "`key`" + `)
) ENGINE=InnoDB ROW_FORMAT=DYNAMIC`
}
