package sqlite

import (
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	fencesql "github.com/fencekit/fence/resources/sql"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	const pragmas = "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	for _, tc := range []struct {
		raw    string
		dsn    string
		tables fencesql.Options
	}{
		{"sqlite:///var/lib/app/fence.db", "file:/var/lib/app/fence.db" + pragmas, fencesql.Options{}},
		{"sqlite://fence.db", "file:fence.db" + pragmas, fencesql.Options{}},
		{"sqlite://data/fence.db?fence-table=f&value-table=v&busy-timeout=2s",
			"file:data/fence.db?_pragma=journal_mode(WAL)&_pragma=busy_timeout(2000)&_txlock=immediate",
			fencesql.Options{FenceTable: "f", ValueTable: "v"}},
		{"sqlite:///tmp/odd%3F%23%25name.db", "file:/tmp/odd%3f%23%25name.db" + pragmas, fencesql.Options{}},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		dsn, tables, err := parseURL(u)
		if err != nil || dsn != tc.dsn || tables != tc.tables {
			t.Errorf("parseURL(%q) = %q, %+v, %v; want %q, %+v", tc.raw, dsn, tables, err, tc.dsn, tc.tables)
		}
	}
}

func TestParseURLRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want string }{
		{"sqlite://", "no file"},
		{"sqlite:///", "no file"},
		{"sqlite:///tmp/", "no file"},
		{"sqlite://u:secret@x.db", "no user or password"},
		{"sqlite://x.db:4", "no port"},
		{"sqlite:///x.db?busy-timeout=soon", "not a duration"},
		{"sqlite:///x.db?sslmode=disable", `unknown parameter "sslmode"`},
		{"sqlite:///x%00.db", "NUL"},
		{"sqlite:///x.db?fence-table=a.b.c", "more than one dot"},
		{"sqlite:///x.db?value-table=" + strings.Repeat("t", 64), "more than the limit"},
		{"sqlite:///x.db#frag", "sqlite://..."},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = parseURL(u)
		if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseURL(%q) = %v; want ErrInvalid saying %q", tc.raw, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("parseURL(%q) = %v shows the password", tc.raw, err)
		}
	}
}

// FuzzParseURL checks that parseURL never panics, refuses with
// fence.ErrInvalid only, and returns a DSN of the form file:PATH?PRAGMAS
// with one ? and no # and tables that New takes.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"sqlite:///tmp/x.db?busy-timeout=3s", "sqlite://x.db?fence-table=f", "sqlite://u:pw@x", "sqlite://%zz", "sqlite:///a%3Fb",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil || strings.ToLower(u.Scheme) != "sqlite" {
			return
		}
		dsn, tables, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q) = %v; want ErrInvalid", raw, err)
			}
			return
		}
		if !strings.HasPrefix(dsn, "file:") || strings.Count(dsn, "?") != 1 || strings.Contains(dsn, "#") {
			t.Fatalf("parseURL(%q) = DSN %q; want file:PATH?PRAGMAS with one ? and no #", raw, dsn)
		}
		if _, err := fencesql.New(new(sql.DB), fencesql.SQLite, &tables); err != nil {
			t.Fatalf("parseURL(%q) accepted tables %+v: %v", raw, tables, err)
		}
	})
}
