// Package ident quotes the table and column names of resources/sql and
// reads the table names its URLs give, for the package and for the URL
// openers of its subpackages, which must not import one another's
// drivers.
package ident

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/urlparam"
)

// MaxLen is the longest identifier (table or column name, or one part of
// a schema-qualified table name) accepted, in bytes: PostgreSQL's limit,
// beyond which it would silently truncate the name. SQLite shares it.
const MaxLen = 63

// MaxMySQLLen is the longest identifier accepted in MySQL, in bytes:
// MySQL's limit is 64 characters.
const MaxMySQLLen = 64

// Quote returns name quoted, in backquotes for MySQL and in double quotes
// otherwise, or an *fence.InvalidError naming field.
func Quote(mysql bool, field, name string) (string, error) {
	limit := MaxLen
	if mysql {
		limit = MaxMySQLLen
	}
	switch {
	case name == "":
		return "", &fence.InvalidError{Field: field, Reason: "empty"}
	case len(name) > limit:
		return "", &fence.InvalidError{Field: field, Reason: fmt.Sprintf("%d bytes, more than the limit of %d", len(name), limit)}
	case !utf8.ValidString(name):
		return "", &fence.InvalidError{Field: field, Reason: "not valid UTF-8"}
	case strings.IndexByte(name, 0) >= 0:
		return "", &fence.InvalidError{Field: field, Reason: "contains a NUL byte"}
	}
	if mysql {
		return "`" + strings.ReplaceAll(name, "`", "``") + "`", nil
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`, nil
}

// QuoteTable quotes a table name, "table" or "schema.table" (in MySQL the
// schema is the database). A name cannot itself contain a dot.
func QuoteTable(mysql bool, field, name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", &fence.InvalidError{Field: field, Reason: fmt.Sprintf("%q has more than one dot; use table or schema.table", name)}
	}
	for i, p := range parts {
		q, err := Quote(mysql, field, p)
		if err != nil {
			return "", err
		}
		parts[i] = q
	}
	return strings.Join(parts, "."), nil
}

// The URL parameters naming the tables.
const (
	FenceTableParam = "fence-table"
	ValueTableParam = "value-table"
)

// URLTables returns the fence-table and value-table parameters of a URL
// read by p, "" when absent, each checked by QuoteTable; a bad name is
// recorded in p. It also refuses a URL with a fragment or an opaque part.
func URLTables(p *urlparam.Params, u *url.URL, mysql bool) (fenceTable, valueTable string) {
	fenceTable, valueTable = table(p, FenceTableParam, mysql), table(p, ValueTableParam, mysql)
	if u.Fragment != "" || u.Opaque != "" {
		p.Fail("a %s URL is %s://...", u.Scheme, u.Scheme)
	}
	return fenceTable, valueTable
}

func table(p *urlparam.Params, param string, mysql bool) string {
	v := p.String(param)
	if v == "" {
		return ""
	}
	if _, err := QuoteTable(mysql, param, v); err != nil {
		reason := err.Error()
		if ie, ok := err.(*fence.InvalidError); ok {
			reason = ie.Reason
		}
		p.Fail("%s=%q: %s", param, v, reason)
	}
	return v
}
