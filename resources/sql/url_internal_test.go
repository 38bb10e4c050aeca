package sql

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/resources/sql/internal/ident"
)

func TestParsePgURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		want pgConfig
	}{
		{"postgres://app@db:5432/app?sslmode=disable", pgConfig{conn: "postgres://app@db:5432/app?sslmode=disable"}},
		{"postgresql://app@db/app?fence-table=ops.fences&sslmode=require&value-table=ops.values", pgConfig{
			tables: Options{FenceTable: "ops.fences", ValueTable: "ops.values"}, conn: "postgresql://app@db/app?sslmode=require"}},
		{"postgres://app:pw@db/app", pgConfig{passwords: []string{"pw"}, conn: "postgres://app:pw@db/app"}},
		{"postgres://app@db/app?password=pw&fence-table=t", pgConfig{passwords: []string{"pw"}, tables: Options{FenceTable: "t"}, conn: "postgres://app@db/app?password=pw"}},
		{"postgres://db/app?%66ence-table=t&application_name=x", pgConfig{tables: Options{FenceTable: "t"}, conn: "postgres://db/app?application_name=x"}},
		{"postgres://db/app?options=-c%20search_path%3Dops", pgConfig{conn: "postgres://db/app?options=-c%20search_path%3Dops"}},
		{"postgres:///app", pgConfig{conn: "postgres:///app"}},
		{"postgres://", pgConfig{conn: "postgres://"}},
		{"postgres://?fence-table=f", pgConfig{tables: Options{FenceTable: "f"}, conn: "postgres://"}},
		{"postgres://?sslmode=disable", pgConfig{conn: "postgres://?sslmode=disable"}},
		{"postgres://u:p%40ss@db/app", pgConfig{passwords: []string{"p@ss"}, conn: "postgres://u:p%40ss@db/app"}},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parsePgURL(u)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parsePgURL(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
	}
}

func TestParsePgURLRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want string }{
		{"postgres://app:secret@db/app?fence-table=", "fence-table is empty"},
		{"postgres://app:secret@db/app?value-table=a&value-table=b", "more than once"},
		{"postgres://app:secret@db/app?sslmode=a&sslmode=b", "more than once"},
		{"postgres://app:secret@db/app?fence-table=a.b.c", "more than one dot"},
		{"postgres://app:secret@db/app?value-table=" + strings.Repeat("t", 64), "more than the limit"},
		{"postgres://app:secret@db/app#frag", "postgres://..."},
		{"postgres://app@db/app?password=secret&fence-table=", "fence-table is empty"},
		// Neither fence's nor libpq's or pgx's: it would reach the server
		// as a setting and fail there as a store error.
		{"postgres://app:secret@db/app?fence-tabel=x", `unknown parameter "fence-tabel"`},
		{"postgres://app:secret@db/app?search_path=ops", "options=-c NAME=VALUE"},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parsePgURL(u)
		if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parsePgURL(%q) = %v; want ErrInvalid saying %q", tc.raw, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("parsePgURL(%q) = %v shows the password", tc.raw, err)
		}
	}
}

// FuzzParsePgURL checks that parsePgURL never panics, refuses with
// fence.ErrInvalid only, never shows the password, and hands pgx a
// connection string of the URL's scheme without this package's
// parameters.
func FuzzParsePgURL(f *testing.F) {
	for _, s := range []string{
		"postgres://app:pw@db:5432/app?fence-table=t&sslmode=disable", "postgresql://app@db/app?password=pw&value-table=a.b",
		"postgres://", "postgres://?fence-table=a&fence-table=b", "postgres://u:p@ss@db/app", "postgres://db/app#x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		u.Scheme = strings.ToLower(u.Scheme) // as fence.OpenResource does
		if u.Scheme != "postgres" && u.Scheme != "postgresql" {
			return // another opener's
		}
		c, err := parsePgURL(u)
		pw, hasPW := u.User.Password()
		if qp := u.Query().Get("password"); qp != "" && !hasPW {
			pw, hasPW = qp, true
		}
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parsePgURL(%q) = %v; want ErrInvalid", raw, err)
			}
			// A password long enough not to occur in the message by
			// chance must not be in it, unless the URL shows it elsewhere.
			if hasPW && len(pw) >= 6 && strings.Contains(err.Error(), pw) && !strings.Contains(redact.URL(u.Redacted()), pw) {
				t.Fatalf("parsePgURL(%q) = %v shows the password", raw, err)
			}
			return
		}
		if !strings.HasPrefix(c.conn, u.Scheme+"://") {
			t.Fatalf("parsePgURL(%q) hands pgx %q, not a %s:// URL", raw, c.conn, u.Scheme)
		}
		if cu, err := url.Parse(c.conn); err == nil {
			q := cu.Query()
			if q.Has(ident.FenceTableParam) || q.Has(ident.ValueTableParam) {
				t.Fatalf("parsePgURL(%q) hands pgx %q, with the table parameters", raw, c.conn)
			}
		}
		if _, _, err := quotedTables(PostgreSQL, withDefaults(c.tables)); err != nil {
			t.Fatalf("parsePgURL(%q) accepted tables %+v: %v", raw, c.tables, err)
		}
	})
}
