package postgres

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/redact"
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
		raw, conn, table string
		passwords        []string
	}{
		{"postgres://app@db:5432/app?sslmode=disable", "postgres://app@db:5432/app?sslmode=disable", "", nil},
		{"postgresql://app@db/app?table=ops.locks&sslmode=require", "postgresql://app@db/app?sslmode=require", "ops.locks", nil},
		{"postgres://app:pw@db/app", "postgres://app:pw@db/app", "", []string{"pw"}},
		{"postgres://app@db/app?password=pw&table=t", "postgres://app@db/app?password=pw", "t", []string{"pw"}},
		{"postgres://db/app?%74able=t&application_name=x", "postgres://db/app?application_name=x", "t", nil},
		{"postgres://db/app?options=-c%20search_path%3Dops&pool_max_conns=2", "postgres://db/app?options=-c%20search_path%3Dops&pool_max_conns=2", "", nil},
		{"postgres:///app", "postgres:///app", "", nil},
		{"postgres://", "postgres://", "", nil},
		{"postgres://?table=t&sslmode=disable", "postgres://?sslmode=disable", "t", nil},
		{"POSTGRES://db/app", "postgres://db/app", "", nil},
		{"postgres://u:p@ss@db/app", "postgres://u:p%40ss@db/app", "", []string{"p@ss"}},
		{"postgres://h1:5432,h2:5433/app?target_session_attrs=read-write&table=Locks",
			"postgres://h1:5432,h2:5433/app?target_session_attrs=read-write", "Locks", nil},
		{"postgres://[::1]:5432/app?table=a.b", "postgres://[::1]:5432/app", "a.b", nil},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			c, err := parseURL(mustParse(t, tt.raw))
			if err != nil {
				t.Fatalf("parseURL: %v", err)
			}
			if c.connString != tt.conn || c.table != tt.table || !slices.Equal(c.passwords, tt.passwords) {
				t.Errorf("parseURL = %+v, want conn %q table %q passwords %q", c, tt.conn, tt.table, tt.passwords)
			}
			if _, err := c.poolConfig(); err != nil {
				t.Errorf("pgxpool.ParseConfig(%q): %v", c.connString, err)
			}
		})
	}
}

func TestParseURLErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw, want string
		pool      bool // the error comes from pgx's parser
	}{
		{"postgres://app:pw@db/app?table=", "table is empty", false},
		{"postgres://app:pw@db/app?table=a&table=b", "more than once", false},
		{"postgres://app:pw@db/app?table=a.b.c", "more than one '.'", false},
		{"postgres://app:pw@db/app?table=" + strings.Repeat("t", 64), "longer than 63 bytes", false},
		{"postgres://app:pw@db/app?sslmode=disable&x=%zz", "query cannot be parsed", false},
		{"postgres://app@db/app?password=pw;x=1", "query cannot be parsed", false},
		// A parameter neither fence's nor libpq's or pgx's would reach the
		// server as a setting, and fail there as a store error.
		{"postgres://app:pw@db/app?tabel=x", `unknown parameter "tabel"`, false},
		{"postgres://app@db/app?password=pw&search_path=ops", "options=-c NAME=VALUE", false},
		{"postgres://app:pw@db/app?sslmode=bogus", "sslmode", true},
		{"postgres://app@db/app?password=pw&pool_max_conns=zero", "pool_max_conns", true},
		{"postgres://app:pw@db:99999/app", "port", true},
		{"postgres://app:pw@db/app?connect_timeout=soon", "connect_timeout", true},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			c, err := parseURL(mustParse(t, tt.raw))
			if tt.pool {
				if err != nil {
					t.Fatalf("parseURL: %v", err)
				}
				_, err = c.poolConfig()
			}
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("got %v, want an error matching fence.ErrInvalid", err)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want it to say %q", err, tt.want)
			}
			if msg := err.Error(); strings.Contains(msg, ":pw@") || strings.Contains(msg, "password=pw") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestScrub: every form of the password leaves an error's text.
func TestScrub(t *testing.T) {
	t.Parallel()
	c := urlConfig{passwords: []string{"p@ss w/d", ""}}
	for _, text := range []string{
		"server said p@ss w/d", "p%40ss+w%2Fd", "p%40ss%20w%2Fd", "postgres://u:p%40ss%20w%2Fd@h/db",
		"postgres://u:other@h/db", "postgres://h/db?password=other",
	} {
		if got := c.scrub(text); strings.Contains(got, "p@ss") || strings.Contains(got, "40ss") || strings.Contains(got, "other") {
			t.Errorf("scrub(%q) = %q", text, got)
		}
	}
}

// FuzzParseURL: parseURL never panics, its errors and pgx's parse errors
// match ErrInvalid and never show a password, and what it accepts keeps
// the URL but for fence's table parameter.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"postgres://app:pw@db:5432/app?table=t&sslmode=disable",
		"postgresql://app@db/app?password=secret&table=a.b",
		"postgres://db/app?%74able=t&x=%zz", "postgres://db/app?tabel=t", "postgres://", "postgres:///app?table=",
		"postgres://u:p@ss@h1:1,h2:2/d?pool_max_conns=x&password=hunter2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		var secrets []string
		if pw, ok := u.User.Password(); ok {
			secrets = append(secrets, pw)
		}
		secrets = append(secrets, u.Query()["password"]...)
		check := func(err error) {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("%q: %v, want an error matching ErrInvalid", raw, err)
			}
			for _, s := range secrets {
				// A password that is short or appears elsewhere in the
				// URL cannot be told apart from the rest of it.
				if len(s) >= 4 && strings.Count(raw, s) == 1 && strings.Contains(err.Error(), s) {
					t.Fatalf("%q: the error shows the password %q: %v", raw, s, err)
				}
			}
		}
		c, err := parseURL(u)
		if err != nil {
			check(err)
			return
		}
		if _, err := c.poolConfig(); err != nil {
			check(err)
		}
		back, err := url.Parse(c.connString)
		if err != nil {
			t.Fatalf("%q: connection string %q does not parse: %v", raw, c.connString, err)
		}
		q, bq := u.Query(), back.Query()
		if tables := q[tableParam]; c.table != "" && (len(tables) != 1 || tables[0] != c.table) {
			t.Fatalf("%q: table %q, want %q", raw, c.table, tables)
		}
		delete(q, tableParam)
		if back.Host != u.Host || back.Path != u.Path || back.User.String() != u.User.String() || len(bq) != len(q) {
			t.Fatalf("%q: connection string %q is not the URL without %s", raw, c.connString, tableParam)
		}
	})
}

// TestOpenLocker opens the test server by URL, creates the table with
// Create, and takes and frees a lease on the Clock given.
func TestOpenLocker(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	table := uniqueName("fence_url_")
	raw := withParam(testenv.PostgresURL(t), "table", table)
	clock := clocktest.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	l, err := fence.OpenLocker(ctx, raw, &fence.OpenOptions{Clock: clock})
	if err != nil {
		t.Fatalf("OpenLocker(%s): %v", redact.URL(raw), err)
	}
	t.Cleanup(func() { dropTable(t, newPool(t, 1, nil), `"`+table+`"`) })
	if _, err := l.Acquire(ctx, "k", time.Minute, nil); !errors.Is(err, fence.ErrStoreMissing) {
		t.Errorf("Acquire before Create: %v, want ErrStoreMissing", err)
	}
	if err := l.Create(ctx); err != nil {
		t.Fatalf("Create: %v", err)
	}
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if want := clock.Now().Add(time.Minute); !lease.ValidUntil.Equal(want) {
		t.Errorf("ValidUntil = %v, want %v (the Clock given + TTL)", lease.ValidUntil, want)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if name := l.Name(); name != "postgres" {
		t.Errorf("Name() = %q", name)
	}
	var pool *pgxpool.Pool
	if !l.As(&pool) || pool == nil {
		t.Error("As(**pgxpool.Pool) gave no pool on the opened Locker")
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := l.Inspect(ctx, "k"); err == nil {
		t.Error("Inspect after Close worked: the pool was not closed")
	}

	alias := strings.Replace(raw, "postgres://", "postgresql://", 1)
	l2, err := fence.OpenLocker(ctx, alias, nil)
	if err != nil {
		t.Fatalf("OpenLocker(postgresql://...): %v", err)
	}
	defer l2.Close()
	if info, err := l2.Inspect(ctx, "k"); err != nil || info.Token != lease.Token {
		t.Errorf("Inspect through postgresql:// = %+v, %v; want token %d", info, err, lease.Token)
	}
}

// TestOpenLockerHidesPassword: a wrong password in the URL fails the
// first call, and no error shows it.
func TestOpenLockerHidesPassword(t *testing.T) {
	t.Parallel()
	u := mustParse(t, testenv.PostgresURL(t))
	u.User = url.UserPassword(u.User.Username(), "s3cret-pw")
	// A table that does not exist: the test server may trust any
	// password, and then the Acquire must fail all the same.
	raw := withParam(u.String(), "table", uniqueName("fence_none_"))
	for _, raw := range []string{raw, withParam(raw, "sslmode", "bogus"), withParam(u.String(), "table", "")} {
		l, err := fence.OpenLocker(t.Context(), raw, nil)
		if err == nil {
			_, err = l.Acquire(t.Context(), "k", time.Minute, nil)
			_ = l.Close()
		}
		if err == nil {
			t.Fatalf("%s: Acquire worked", redact.URL(raw))
		}
		t.Log(err)
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// withParam adds name=value to the query of raw.
func withParam(raw, name, value string) string {
	sep := "?"
	if strings.Contains(raw, "?") {
		sep = "&"
	}
	return raw + sep + url.QueryEscape(name) + "=" + url.QueryEscape(value)
}

// TestOpenLockerServerSettings: a misspelt parameter is refused at open,
// before it reaches the server (which would refuse it as an unknown
// setting, a store error); a server setting given as libpq does, in
// options=-c NAME=VALUE, reaches the server: the table is created in the
// schema of the search_path it sets.
func TestOpenLockerServerSettings(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	base := testenv.PostgresURL(t)
	if _, err := fence.OpenLocker(ctx, withParam(base, "tabel", "x"), nil); !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), `"tabel"`) {
		t.Errorf("OpenLocker with tabel=x = %v; want ErrInvalid naming it", err)
	}
	pool := newPool(t, 1, nil)
	schema := uniqueName("fence_opts_")
	if _, err := pool.Exec(ctx, `CREATE SCHEMA "`+schema+`"`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), `DROP SCHEMA "`+schema+`" CASCADE`) })
	// A space in a value is %20: pgx, as libpq, takes a + as it is.
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	l, err := fence.OpenLocker(ctx, base+sep+"options=-c%20search_path%3D"+schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename = $2", schema, DefaultTable).Scan(&n); err != nil || n != 1 {
		t.Errorf("table %s.%s: count %d, %v; want the table created in the schema options=-c search_path set", schema, DefaultTable, n, err)
	}
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
}
