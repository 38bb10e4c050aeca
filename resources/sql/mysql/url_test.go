package mysql

import (
	"database/sql"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/mysqlurl"
	"github.com/fencekit/fence/internal/redact"
	fencesql "github.com/fencekit/fence/resources/sql"
	"github.com/fencekit/fence/resources/sql/internal/ident"
)

// TestParseURL: mysql:// URLs give the driver's configuration, shown as a
// DSN without the password, the password, and the tables.
func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw           string
		tables        fencesql.Options
		passwords     []string
		dsn, password string
	}{
		{"mysql://db/app", fencesql.Options{}, nil, "tcp(db:3306)/app", ""},
		{"mysql://app:pw@db:3307/app?tls=skip-verify&fence-table=ops.f&value-table=v",
			fencesql.Options{FenceTable: "ops.f", ValueTable: "v"}, []string{"pw"}, "app@tcp(db:3307)/app?tls=skip-verify", "pw"},
		{"mysql://app:p%40ss%2Fw:rd@[::1]/app?timeout=2s&interpolateParams=true",
			fencesql.Options{}, []string{"p@ss/w:rd"}, "app@tcp([::1]:3306)/app?interpolateParams=true&timeout=2s", "p@ss/w:rd"},
		{"mysql://app@db/app?fence-table=" + strings.Repeat("t", 64),
			fencesql.Options{FenceTable: strings.Repeat("t", 64)}, nil, "app@tcp(db:3306)/app", ""},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		parsed, tables, err := parseURL(u)
		if err != nil {
			t.Errorf("parseURL(%q) = %v; want a MySQL configuration", tc.raw, err)
			continue
		}
		if dsn, pw := withoutPassword(parsed.Config), parsed.Config.Passwd; dsn != tc.dsn || pw != tc.password {
			t.Errorf("parseURL(%q) = DSN %q, password %q; want %q, %q", tc.raw, dsn, pw, tc.dsn, tc.password)
		}
		if tables != tc.tables || !reflect.DeepEqual(parsed.Passwords, tc.passwords) {
			t.Errorf("parseURL(%q) = tables %+v, passwords %q; want %+v, %q", tc.raw, tables, parsed.Passwords, tc.tables, tc.passwords)
		}
	}
}

// withoutPassword returns cfg as a DSN, without its password.
func withoutPassword(cfg *gomysql.Config) string {
	cfg = cfg.Clone()
	cfg.Passwd = ""
	return cfg.FormatDSN()
}

func TestParseURLRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want string }{
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
// fence.ErrInvalid only, never shows the password, reads the URL as
// lockers/mysql does (mysqlurl.Parse), and gives a configuration the
// driver reads back as the URL says, without the password in its DSN.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
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
		if u.Scheme != "mysql" {
			return // another opener's
		}
		parsed, tables, err := parseURL(u)
		pw, hasPW := u.User.Password()
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q) = %v; want ErrInvalid", raw, err)
			}
			if hasPW && len(pw) >= 6 && strings.Contains(err.Error(), pw) && !strings.Contains(redact.URL(u.Redacted()), pw) {
				t.Fatalf("parseURL(%q) = %v shows the password", raw, err)
			}
			return
		}
		// The DSN without the password holds no password and reads back
		// as the URL says.
		dsn := withoutPassword(parsed.Config)
		if len(pw) >= 6 && strings.Contains(dsn, pw) && !strings.Contains(u.Host+u.Path+u.RawQuery, pw) {
			t.Fatalf("parseURL(%q) = DSN %q, with the password", raw, dsn)
		}
		cfg, err := gomysql.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("parseURL(%q) = DSN %q, which the driver refuses: %v", raw, dsn, err)
		}
		if cfg.User != u.User.Username() || parsed.Config.Passwd != pw || cfg.DBName != strings.TrimPrefix(u.Path, "/") || cfg.Net != "tcp" {
			t.Fatalf("parseURL(%q) = DSN %q, read back as user %q, database %q, net %q", raw, dsn, cfg.User, cfg.DBName, cfg.Net)
		}
		// The opener's configuration is mysqlurl's, which the locker's
		// opener uses too.
		locker, err := mysqlurl.Parse(u, ident.FenceTableParam, ident.ValueTableParam)
		if err != nil || locker.Config.Passwd != pw || locker.Config.Addr != cfg.Addr {
			t.Fatalf("parseURL(%q) accepted it, mysqlurl.Parse = %+v, %v", raw, locker, err)
		}
		if _, err := fencesql.New(new(sql.DB), fencesql.MySQL, &tables); err != nil {
			t.Fatalf("parseURL(%q) accepted tables %+v: %v", raw, tables, err)
		}
	})
}
