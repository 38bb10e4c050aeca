package sql

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/mysqlurl"
	"github.com/fencekit/fence/internal/redact"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	const pragmas = "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	for _, tc := range []struct {
		raw  string
		want urlConfig
	}{
		{"postgres://app@db:5432/app?sslmode=disable", urlConfig{dialect: PostgreSQL, conn: "postgres://app@db:5432/app?sslmode=disable"}},
		{"postgresql://app@db/app?fence-table=ops.fences&sslmode=require&value-table=ops.values", urlConfig{
			dialect: PostgreSQL, tables: Tables{Fence: "ops.fences", Value: "ops.values"}, conn: "postgresql://app@db/app?sslmode=require"}},
		{"postgres://app:pw@db/app", urlConfig{dialect: PostgreSQL, passwords: []string{"pw"}, conn: "postgres://app:pw@db/app"}},
		{"postgres://app@db/app?password=pw&fence-table=t", urlConfig{dialect: PostgreSQL, passwords: []string{"pw"}, tables: Tables{Fence: "t"}, conn: "postgres://app@db/app?password=pw"}},
		{"postgres://db/app?%66ence-table=t&application_name=x", urlConfig{dialect: PostgreSQL, tables: Tables{Fence: "t"}, conn: "postgres://db/app?application_name=x"}},
		{"postgres://db/app?options=-c%20search_path%3Dops", urlConfig{dialect: PostgreSQL, conn: "postgres://db/app?options=-c%20search_path%3Dops"}},
		{"postgres:///app", urlConfig{dialect: PostgreSQL, conn: "postgres:///app"}},
		{"postgres://", urlConfig{dialect: PostgreSQL, conn: "postgres://"}},
		{"postgres://?fence-table=f", urlConfig{dialect: PostgreSQL, tables: Tables{Fence: "f"}, conn: "postgres://"}},
		{"postgres://?sslmode=disable", urlConfig{dialect: PostgreSQL, conn: "postgres://?sslmode=disable"}},
		{"postgres://u:p%40ss@db/app", urlConfig{dialect: PostgreSQL, passwords: []string{"p@ss"}, conn: "postgres://u:p%40ss@db/app"}},
		{"sqlite:///var/lib/app/fence.db", urlConfig{dialect: SQLite, conn: "file:/var/lib/app/fence.db" + pragmas}},
		{"sqlite://fence.db", urlConfig{dialect: SQLite, conn: "file:fence.db" + pragmas}},
		{"sqlite://data/fence.db?fence-table=f&value-table=v&busy-timeout=2s", urlConfig{
			dialect: SQLite, tables: Tables{Fence: "f", Value: "v"},
			conn: "file:data/fence.db?_pragma=journal_mode(WAL)&_pragma=busy_timeout(2000)&_txlock=immediate"}},
		{"sqlite:///tmp/odd%3F%23%25name.db", urlConfig{dialect: SQLite, conn: "file:/tmp/odd%3f%23%25name.db" + pragmas}},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseURL(u)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseURL(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
	}
	// mysql:// URLs: the driver's configuration, as a DSN without the
	// password, and the password.
	for _, tc := range []struct {
		raw           string
		want          urlConfig
		dsn, password string
	}{
		{"mysql://db/app", urlConfig{dialect: MySQL}, "tcp(db:3306)/app", ""},
		{"mysql://app:pw@db:3307/app?tls=skip-verify&fence-table=ops.f&value-table=v", urlConfig{
			dialect: MySQL, tables: Tables{Fence: "ops.f", Value: "v"}, passwords: []string{"pw"}}, "app@tcp(db:3307)/app?tls=skip-verify", "pw"},
		{"mysql://app:p%40ss%2Fw:rd@[::1]/app?timeout=2s&interpolateParams=true", urlConfig{
			dialect: MySQL, passwords: []string{"p@ss/w:rd"}}, "app@tcp([::1]:3306)/app?interpolateParams=true&timeout=2s", "p@ss/w:rd"},
		{"mysql://app@db/app?fence-table=" + strings.Repeat("t", 64), urlConfig{dialect: MySQL, tables: Tables{Fence: strings.Repeat("t", 64)}}, "app@tcp(db:3306)/app", ""},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseURL(u)
		if err != nil || got.mysql == nil {
			t.Errorf("parseURL(%q) = %+v, %v; want a MySQL configuration", tc.raw, got, err)
			continue
		}
		if dsn, pw := withoutPassword(got.mysql.Config), got.mysql.Config.Passwd; dsn != tc.dsn || pw != tc.password {
			t.Errorf("parseURL(%q) = DSN %q, password %q; want %q, %q", tc.raw, dsn, pw, tc.dsn, tc.password)
		}
		if got.mysql = nil; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseURL(%q) = %+v; want %+v", tc.raw, got, tc.want)
		}
	}
}

// withoutPassword returns cfg as a DSN, without its password.
func withoutPassword(cfg *mysql.Config) string {
	cfg = cfg.Clone()
	cfg.Passwd = ""
	return cfg.FormatDSN()
}

func TestParseURLRefuses(t *testing.T) {
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
		{"sqlite://", "no file"},
		{"sqlite:///", "no file"},
		{"sqlite:///tmp/", "no file"},
		{"sqlite://u:secret@x.db", "no user or password"},
		{"sqlite://x.db:4", "no port"},
		{"sqlite:///x.db?busy-timeout=soon", "not a duration"},
		{"sqlite:///x.db?sslmode=disable", `unknown parameter "sslmode"`},
		{"sqlite:///x%00.db", "NUL"},
		{"mssql://db/app", "not a postgres://"},
		{"mysql://app:secret@db/app?fence-table=a.b.c", "more than one dot"},
		{"mysql://app:secret@db/app?value-table=" + strings.Repeat("t", 65), "more than the limit"},
		{"mysql://app:secret@db/app?password=secret", "no password parameter"},
		{"mysql://app:secret@db/app?timeout=soon", "invalid duration"},
		{"mysql://app:secret@db/app?tls=bogus", "bogus"},
		{"mysql://app:secret@db/", "no database"},
		{"mysql://app:secret@db", "no database"},
		{"mysql://app:secret@db/a/b", "one database"},
		{"mysql://app:secret@/app", "no host"},
		{"mysql://app:secret@db:0/app", "not a number from 1"},
		{"mysql://app:secret@db:/app", "empty port"},
		{"mysql://app:secret@db/app#x", "unexpected fragment"},
		{"mysql://app:secret@db:65536/app", "not a number from 1"},
		{"mysql://a%3Ab:secret@db/app", "colon or NUL"},
		{"mysql://app:secret@db/a%60b", "backquote"},
		{"mysql://app:secret@db/app?x=%zz", "query cannot be parsed"},
		{"mysql://app:secret@db/app?tls=true&tls=false", "more than once"},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseURL(u)
		if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseURL(%q) = %v; want ErrInvalid saying %q", tc.raw, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("parseURL(%q) = %v shows the password", tc.raw, err)
		}
	}
}

// FuzzParseURL checks that parseURL never panics, refuses with
// fence.ErrInvalid only, never shows the password, and hands pgx a
// connection string of the URL's scheme without this package's
// parameters.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"postgres://app:pw@db:5432/app?fence-table=t&sslmode=disable", "postgresql://app@db/app?password=pw&value-table=a.b",
		"postgres://", "postgres://?fence-table=a&fence-table=b", "postgres://u:p@ss@db/app", "postgres://db/app#x",
		"sqlite:///tmp/x.db?busy-timeout=3s", "sqlite://x.db?fence-table=f", "sqlite://u:pw@x", "sqlite://%zz", "sqlite:///a%3Fb",
		"mysql://app:pw@db:3306/app?tls=true&fence-table=f", "mysql://u@[::1]/d?timeout=1s", "mysql://u:p@ss@db/a", "mysql://db/a%3Fb?loc=Europe%2FParis",
		"mysql://db/app?password=secret", "mysql://u:pw@db/app?tls=bogus&value-table=a.b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		u.Scheme = strings.ToLower(u.Scheme) // as fence.OpenResource does
		c, err := parseURL(u)
		pw, hasPW := u.User.Password()
		if qp := u.Query().Get("password"); qp != "" && !hasPW {
			pw, hasPW = qp, true
		}
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q) = %v; want ErrInvalid", raw, err)
			}
			// A password long enough not to occur in the message by
			// chance must not be in it, unless the URL shows it elsewhere.
			if hasPW && len(pw) >= 6 && strings.Contains(err.Error(), pw) && !strings.Contains(redact.URL(u.Redacted()), pw) {
				t.Fatalf("parseURL(%q) = %v shows the password", raw, err)
			}
			return
		}
		switch c.dialect {
		case PostgreSQL:
			if !strings.HasPrefix(c.conn, u.Scheme+"://") {
				t.Fatalf("parseURL(%q) hands pgx %q, not a %s:// URL", raw, c.conn, u.Scheme)
			}
			if cu, err := url.Parse(c.conn); err == nil {
				q := cu.Query()
				if q.Has(fenceTableParam) || q.Has(valueTableParam) {
					t.Fatalf("parseURL(%q) hands pgx %q, with the table parameters", raw, c.conn)
				}
			}
		case SQLite:
			if !strings.HasPrefix(c.conn, "file:") || strings.Count(c.conn, "?") != 1 || strings.Contains(c.conn, "#") {
				t.Fatalf("parseURL(%q) = DSN %q; want file:PATH?PRAGMAS with one ? and no #", raw, c.conn)
			}
		case MySQL:
			// The DSN without the password holds no password and reads
			// back as the URL says.
			dsn := withoutPassword(c.mysql.Config)
			if pw, _ := u.User.Password(); len(pw) >= 6 && strings.Contains(dsn, pw) && !strings.Contains(u.Host+u.Path+u.RawQuery, pw) {
				t.Fatalf("parseURL(%q) = DSN %q, with the password", raw, dsn)
			}
			cfg, err := mysql.ParseDSN(dsn)
			if err != nil {
				t.Fatalf("parseURL(%q) = DSN %q, which the driver refuses: %v", raw, dsn, err)
			}
			pw, _ := u.User.Password()
			if cfg.User != u.User.Username() || c.mysql.Config.Passwd != pw || cfg.DBName != strings.TrimPrefix(u.Path, "/") || cfg.Net != "tcp" {
				t.Fatalf("parseURL(%q) = DSN %q, read back as user %q, database %q, net %q", raw, dsn, cfg.User, cfg.DBName, cfg.Net)
			}
			// The opener's configuration is mysqlurl's, which the locker's
			// opener uses too.
			parsed, err := mysqlurl.Parse(u, fenceTableParam, valueTableParam)
			if err != nil || parsed.Config.Passwd != pw || parsed.Config.Addr != cfg.Addr {
				t.Fatalf("parseURL(%q) accepted it, mysqlurl.Parse = %+v, %v", raw, parsed, err)
			}
		default:
			t.Fatalf("parseURL(%q) accepted it without a dialect", raw)
		}
		if _, _, err := c.tables.quotedIn(c.dialect); err != nil {
			t.Fatalf("parseURL(%q) accepted tables %+v: %v", raw, c.tables, err)
		}
	})
}
