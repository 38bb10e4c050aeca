package mysql

import (
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

func mustParse(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", raw, err)
	}
	return u
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw, addr, user, pw, db, table string
		params                         map[string]string
		parseTime                      bool
		timeout                        time.Duration
	}{
		{raw: "mysql://app@db:3307/app", addr: "db:3307", user: "app", db: "app"},
		{raw: "mysql://app:pw@db/app?table=ops.locks", addr: "db:3306", user: "app", pw: "pw", db: "app", table: "ops.locks"},
		{raw: "mysql://db/app?parseTime=true&timeout=2s", addr: "db:3306", db: "app", parseTime: true, timeout: 2 * time.Second},
		{raw: "mysql://db/app?innodb_lock_wait_timeout=1&table=Locks", addr: "db:3306", db: "app", table: "Locks",
			params: map[string]string{"innodb_lock_wait_timeout": "1"}},
		{raw: "mysql://[::1]:3306/app", addr: "[::1]:3306", db: "app"},
		{raw: "mysql://u:p%40ss@db/app", addr: "db:3306", user: "u", pw: "p@ss", db: "app"},
		{raw: "MYSQL://db/app", addr: "db:3306", db: "app"},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			c, err := parseURL(mustParse(t, tt.raw))
			if err != nil {
				t.Fatalf("parseURL: %v", err)
			}
			cfg := c.cfg
			if cfg.Net != "tcp" || cfg.Addr != tt.addr || cfg.User != tt.user || cfg.Passwd != tt.pw || cfg.DBName != tt.db || c.table != tt.table {
				t.Errorf("parseURL = %s %s user %q pw %q db %q table %q, want tcp %s user %q pw %q db %q table %q",
					cfg.Net, cfg.Addr, cfg.User, cfg.Passwd, cfg.DBName, c.table, tt.addr, tt.user, tt.pw, tt.db, tt.table)
			}
			if cfg.ParseTime != tt.parseTime || (tt.timeout != 0 && cfg.Timeout != tt.timeout) {
				t.Errorf("parseTime %v timeout %v, want %v %v", cfg.ParseTime, cfg.Timeout, tt.parseTime, tt.timeout)
			}
			for k, v := range tt.params {
				if cfg.Params[k] != v {
					t.Errorf("param %s = %q, want %q", k, cfg.Params[k], v)
				}
			}
			if _, ok := cfg.Params[tableParam]; ok {
				t.Errorf("the store got fence's table parameter: %v", cfg.Params)
			}
		})
	}
}

func TestParseURLErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, want string }{
		{"mysql://app:secretpw@db/app?table=", "table is empty"},
		{"mysql://app:secretpw@db/app?table=a&table=b", "more than once"},
		{"mysql://app:secretpw@db/app?table=a.b.c", "more than one '.'"},
		{"mysql://app:secretpw@db/app?table=a%60b", "backtick"},
		{"mysql://app:secretpw@db/app?table=" + strings.Repeat("t", 65), "longer than 64"},
		{"mysql://app:secretpw@db/app?x=%zz", "query cannot be parsed"},
		{"mysql://app:secretpw@db/a/b", "one database name"},
		{"mysql://app:secretpw@db/app?parseTime=maybe", "parameter parseTime: "},
		// mysqlurl's rules, which the resources/sql opener shares: a host
		// and a database are required (the locker used to default them to
		// 127.0.0.1 and none), and the password only in the user
		// information.
		{"mysql:///app", "no host"},
		{"mysql://db", "no database"},
		{"mysql://app:secretpw@db/", "no database"},
		{"mysql://app:secretpw@db/app?password=secretpw", "no password parameter"},
		{"mysql://app:secretpw@db:99999/app", "not a number from 1 to 65535"},
		{"mysql://a%3Ab:secretpw@db/app", "colon or NUL byte in the user name"},
		{"mysql://app:secretpw@db/a%60b", "backquote"},
		{"mysql://app:secretpw@db/app?timeout=soon", "timeout"},
		{"mysql://app:secretpw@:3306/app", "no host"},
		{"mysql://app:secretpw@db:/app", "empty port"},
		{"mysql://app:secretpw@db/app#frag", "unexpected fragment"},
		{"mysql:app", "want mysql://"},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			_, err := parseURL(mustParse(t, tt.raw))
			if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("parseURL = %v, want ErrInvalid saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secretpw") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// testURL returns the mysql:// URL of the test server, with params.
func testURL(t testing.TB, params string) string {
	t.Helper()
	cfg, err := mysqldrv.ParseDSN(testenv.MySQLDSN(t))
	if err != nil {
		t.Fatalf("ParseDSN: %v", err)
	}
	u := url.URL{Scheme: "mysql", Host: cfg.Addr, Path: "/" + cfg.DBName, RawQuery: params}
	if cfg.User != "" {
		u.User = url.User(cfg.User)
	}
	return u.String()
}

// TestOpenLockerURL opens the test server by URL, creates a table through
// the opened locker's Create, and takes, renews and releases a lease.
func TestOpenLockerURL(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	table := uniqueName("fence_url_")
	l, err := fence.OpenLocker(ctx, testURL(t, "table="+table+"&timeout=5s"), nil)
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	db := newDB(t, 1)
	t.Cleanup(func() { dropTable(t, db, "`"+table+"`") })
	defer l.Close()
	if err := l.Create(ctx); err != nil {
		t.Fatalf("Create: %v", err)
	}
	lease, err := l.Acquire(ctx, "job", time.Minute, nil)
	if err != nil || lease.Token != 1 {
		t.Fatalf("Acquire = %v, %v; want token 1", lease, err)
	}
	if lease, err = l.Renew(ctx, lease); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
	var token int64
	if err := db.QueryRowContext(ctx, "SELECT token FROM `"+table+"` WHERE `key` = 'job'").Scan(&token); err != nil || token != 1 {
		t.Errorf("the table holds token %d (%v), want 1", token, err)
	}
	var opened *sql.DB
	if !l.As(&opened) || opened == nil {
		t.Fatal("As(**sql.DB) gave no *sql.DB on the opened Locker")
	}
	if err := opened.PingContext(ctx); err != nil {
		t.Errorf("Ping through As's *sql.DB: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := opened.PingContext(ctx); err == nil {
		t.Error("the opener's *sql.DB still works after Close")
	}
}

// TestOpenLockerURLErrors shows the opener's errors: a wrong password
// never printed, and a missing table matching ErrStoreMissing.
func TestOpenLockerURLErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg, err := mysqldrv.ParseDSN(testenv.MySQLDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	bad := "mysql://nobody:Wr0ngSecret@" + cfg.Addr + "/" + cfg.DBName + "?timeout=5s"
	l, err := fence.OpenLocker(ctx, bad, nil)
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer l.Close()
	_, err = l.Acquire(ctx, "k", time.Minute, nil)
	if err == nil || strings.Contains(err.Error(), "Wr0ngSecret") {
		t.Errorf("Acquire with a wrong password = %v, want an error without the password", err)
	}
	missing, err := fence.OpenLocker(ctx, testURL(t, "table="+uniqueName("fence_missing_")), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer missing.Close()
	if _, err := missing.Acquire(ctx, "k", time.Minute, nil); !errors.Is(err, fence.ErrStoreMissing) {
		t.Errorf("Acquire on a missing table = %v, want ErrStoreMissing", err)
	}
	if _, err := fence.OpenLocker(ctx, "mysql://app:Wr0ngSecret@db/app?table=", nil); err == nil || strings.Contains(err.Error(), "Wr0ngSecret") {
		t.Errorf("OpenLocker(bad table) = %v, want an error without the password", err)
	}
}

// FuzzParseURL checks that any URL either parses into a configuration
// the store can format, or is refused with ErrInvalid without its
// password, and never panics.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"mysql://app:pw@db:3306/app?table=t&parseTime=true",
		"mysql://[::1]/x?timeout=1s", "mysql://h/d?table=a.b", "mysql:///?table=a.b", "mysql://u:p%zz@h/d",
		"mysql://h/d?tls=skip-verify&loc=Local", "mysql://h/d?table=%60",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil || !strings.EqualFold(u.Scheme, "mysql") {
			return
		}
		c, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q) = %v, want ErrInvalid", raw, err)
			}
			if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(err.Error(), pw) {
				t.Fatalf("parseURL(%q) error shows the password: %v", raw, err)
			}
			return
		}
		if c.cfg == nil || c.cfg.Net != "tcp" || c.cfg.Addr == "" {
			t.Fatalf("parseURL(%q) = %+v", raw, c.cfg)
		}
		if _, err := parseTable(c.table); err != nil {
			t.Fatalf("parseURL(%q) accepted table %q: %v", raw, c.table, err)
		}
		if _, ok := c.cfg.Params[tableParam]; ok {
			t.Fatalf("parseURL(%q) passed table to the driver", raw)
		}
	})
}
