package redlock

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
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
		raw  string
		want urlConfig
	}{
		{"redlock://h1:7001,h2:7002,h3:7003/", urlConfig{addrs: []string{"h1:7001", "h2:7002", "h3:7003"}, timeout: defaultTimeout}},
		{"redlock://h1,h2,h3", urlConfig{addrs: []string{"h1:6379", "h2:6379", "h3:6379"}, timeout: defaultTimeout}},
		{"REDLOCK://a:pw@h1,h2,h3?prefix=app:&db=2&timeout=1s&tls=true", urlConfig{
			addrs: []string{"h1:6379", "h2:6379", "h3:6379"}, username: "a", password: "pw",
			prefix: "app:", db: 2, timeout: time.Second, tls: true}},
		{"redlock://:p%40ss@10.0.0.1:1,10.0.0.2:2,10.0.0.3:3,10.0.0.4:4,10.0.0.5:5", urlConfig{
			addrs: []string{"10.0.0.1:1", "10.0.0.2:2", "10.0.0.3:3", "10.0.0.4:4", "10.0.0.5:5"}, password: "p@ss", timeout: defaultTimeout}},
		{"redlock://[::1]:7000", urlConfig{addrs: []string{"[::1]:7000"}, timeout: defaultTimeout}},
		{"redlock://[::1]", urlConfig{addrs: []string{"[::1]:6379"}, timeout: defaultTimeout}},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			u := mustParse(t, tt.raw)
			u.Scheme = strings.ToLower(u.Scheme)
			c, err := parseURL(u)
			if err != nil {
				t.Fatalf("parseURL: %v", err)
			}
			if !slices.Equal(c.addrs, tt.want.addrs) || c.username != tt.want.username || c.password != tt.want.password ||
				c.prefix != tt.want.prefix || c.db != tt.want.db || c.timeout != tt.want.timeout || c.tls != tt.want.tls {
				t.Errorf("parseURL = %+v, want %+v", c, tt.want)
			}
			o := c.clientOptions(c.addrs[0])
			if o.MaxRetries != -1 || !o.ContextTimeoutEnabled || o.ReadTimeout != c.timeout || (o.TLSConfig != nil) != c.tls {
				t.Errorf("client options %+v do not fail fast with the URL's settings", o)
			}
		})
	}
}

func TestParseURLErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, want string }{
		{"redlock://u:pw@", "no masters"},
		{"redlock://u:pw@h1,,h3", "empty"},
		{"redlock://u:pw@h1,h2:", "port"},
		{"redlock://u:pw@h1:0,h2:2", "port"},
		{"redlock://u:pw@h1:x,h2:2", "port"},
		{"redlock://u:pw@h1:1,h1:1,h3:3", "given twice"},
		{"redlock://u:pw@h1,h2/0", "unexpected path"},
		{"redlock://u:pw@h1,h2?db=-1", "not a database number"},
		{"redlock://u:pw@h1,h2?db=01", "not a database number"},
		{"redlock://u:pw@h1,h2?prefix=", "prefix is empty"},
		{"redlock://u:pw@h1,h2?timeout=soon", "timeout"},
		{"redlock://u:pw@h1,h2?tls=maybe", "tls"},
		{"redlock://u:pw@h1,h2?password=pw", "unknown parameter"},
		{"redlock://u:pw@h1,h2?prefix=a&prefix=b", "more than once"},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			_, err := parseURL(mustParse(t, tt.raw))
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("got %v, want an error matching fence.ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestOpenLocker opens a locker over three masters by URL, through
// fence.OpenLocker, uses it, and checks that a Lock waiting through it
// is woken by a release through another, that its records are in the
// URL's database, and that Close closes the clients the opener made.
func TestOpenLocker(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	ctx := t.Context()
	raw := "redlock://" + ms[0].addr + "," + ms[1].addr + "," + ms[2].addr + "/?prefix=opened:&db=1"
	open := func() *fence.Locker {
		l, err := fence.OpenLocker(ctx, raw, nil)
		if err != nil {
			t.Fatalf("OpenLocker: %v", err)
		}
		t.Cleanup(func() { _ = l.Close() })
		return l
	}
	l, other := open(), open()
	waittest.WokenByFree(t, other, l, "release")
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
	for _, m := range ms {
		if v := m.client.Get(ctx, "opened:token:k").Val(); v != "" {
			t.Errorf("%s: the counter is in database 0, not the URL's 1: %q", m.proc, v)
		}
		db1 := newClientDB(m.addr, 1)
		v, err := db1.Get(ctx, "opened:token:k").Result()
		_ = db1.Close()
		if rec, perr := parseRecord(v); err != nil || perr != nil || rec != (record{token: lease.Token, owner: lease.Owner}) {
			t.Errorf("%s: the counter in database 1 is %q (%v), want the lease's", m.proc, v, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := l.Acquire(ctx, "k", time.Minute, nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Acquire after Close: %v, want an error saying the clients are closed", err)
	}
}

func TestOpenLockerErrorHidesPassword(t *testing.T) {
	t.Parallel()
	_, err := fence.OpenLocker(t.Context(), "redlock://app:s3cret@h1,h2,h2?prefix=x", nil)
	if !errors.Is(err, fence.ErrInvalid) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("OpenLocker: %v, want ErrInvalid without the password", err)
	}
}

// FuzzParseURL: parseURL never panics, its errors match ErrInvalid and
// never show the password, and what it accepts names at least one master
// and no master twice.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"redlock://h1:7001,h2:7002,h3:7003/", "redlock://u:hunter2@h1,h2,h3?prefix=p&db=3&timeout=2s&tls=1",
		"redlock://[::1]:1", "redlock://h1,,h2", "redlock://:pw@h1:99999", "redlock://h?x=%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		pw, _ := u.User.Password()
		c, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("%q: %v, want an error matching ErrInvalid", raw, err)
			}
			if len(pw) >= 4 && strings.Count(raw, pw) == 1 && strings.Contains(err.Error(), pw) {
				t.Fatalf("%q: the error shows the password: %v", raw, err)
			}
			return
		}
		if len(c.addrs) == 0 {
			t.Fatalf("%q accepted with no masters", raw)
		}
		seen := map[string]bool{}
		for _, a := range c.addrs {
			if seen[a] {
				t.Fatalf("%q accepted with master %s twice", raw, a)
			}
			seen[a] = true
		}
	})
}

// TestAs: As gives the masters' clients under a Locker, in order: the
// caller's from New, and the ones the opener made from a URL.
func TestAs(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	l := newLocker(t, ms, nil)
	var got []Client
	if !l.As(&got) || !slices.Equal(got, clients(ms)) {
		t.Errorf("As(*[]Client) of New's Locker = %v; want the clients given to New", got)
	}
	var one Client
	if l.As(&one) || l.As(nil) {
		t.Error("As succeeded for a target other than *[]Client")
	}

	raw := "redlock://" + ms[0].addr + "," + ms[1].addr + "," + ms[2].addr + "/"
	opened, err := fence.OpenLocker(t.Context(), raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	var made []Client
	if !opened.As(&made) || len(made) != len(ms) {
		t.Fatalf("As(*[]Client) of an opened Locker: %d clients; want %d", len(made), len(ms))
	}
	for i, c := range made {
		rc, ok := c.(*goredis.Client)
		if !ok || rc.Options().Addr != ms[i].addr {
			t.Errorf("client %d = %T; want a *goredis.Client of %s", i, c, ms[i].addr)
			continue
		}
		if err := rc.Ping(t.Context()).Err(); err != nil {
			t.Errorf("Ping through client %d: %v", i, err)
		}
	}
}
