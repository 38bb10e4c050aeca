package redis

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
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
		raw      string
		opts     Options
		addr     string // simple client
		db       int
		user, pw string
		tls      bool
	}{
		{"redis://127.0.0.1:6379/0", Options{Prefix: DefaultPrefix, WaitTimeout: DefaultWaitTimeout}, "127.0.0.1:6379", 0, "", "", false},
		{"redis://h", Options{Prefix: DefaultPrefix, WaitTimeout: DefaultWaitTimeout}, "h:6379", 0, "", "", false},
		{"rediss://app:s3cret@h:7000/3?prefix=jobs:&min-replicas=2&wait-timeout=250ms&dial_timeout=2s",
			Options{Prefix: "jobs:", MinReplicas: 2, WaitTimeout: 250 * time.Millisecond}, "h:7000", 3, "app", "s3cret", true},
		{"redis://:pw@h?%70refix=p:", Options{Prefix: "p:", WaitTimeout: DefaultWaitTimeout}, "h:6379", 0, "", "pw", false},
		{"REDIS://h/2", Options{Prefix: DefaultPrefix, WaitTimeout: DefaultWaitTimeout}, "h:6379", 2, "", "", false},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			u := mustParse(t, tt.raw)
			u.Scheme = strings.ToLower(u.Scheme)
			c, err := parseURL(u)
			if err != nil {
				t.Fatalf("parseURL: %v", err)
			}
			if c.opts != tt.opts {
				t.Errorf("options %+v, want %+v", c.opts, tt.opts)
			}
			o := c.simple
			if o == nil || o.Addr != tt.addr || o.DB != tt.db || o.Username != tt.user || o.Password != tt.pw || (o.TLSConfig != nil) != tt.tls {
				t.Errorf("go-redis options %+v; want addr %s db %d user %q password %q tls %v", o, tt.addr, tt.db, tt.user, tt.pw, tt.tls)
			}
		})
	}
}

func TestParseSentinelURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw       string
		sentinels []string
		master    string
		db        int
		user, pw  string
		prefix    string
	}{
		{"redis+sentinel://s1:26379,s2:26380,s3:26381/mymaster", []string{"s1:26379", "s2:26380", "s3:26381"}, "mymaster", 0, "", "", DefaultPrefix},
		{"redis+sentinel://[::1]:26379/m", []string{"[::1]:26379"}, "m", 0, "", "", DefaultPrefix},
		{"redis+sentinel://app:pw@s1:26379/m/4?prefix=x:&read_timeout=1s", []string{"s1:26379"}, "m", 4, "app", "pw", "x:"},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			c, err := parseURL(mustParse(t, tt.raw))
			if err != nil {
				t.Fatalf("parseURL: %v", err)
			}
			o := c.failover
			if o == nil || !slices.Equal(o.SentinelAddrs, tt.sentinels) || o.MasterName != tt.master || o.DB != tt.db ||
				o.Username != tt.user || o.Password != tt.pw || o.SentinelUsername != "" || o.SentinelPassword != "" || c.opts.Prefix != tt.prefix {
				t.Errorf("failover options %+v, prefix %q; want Sentinels %v master %q db %d user %q password %q (for the data nodes only), prefix %q",
					o, c.opts.Prefix, tt.sentinels, tt.master, tt.db, tt.user, tt.pw, tt.prefix)
			}
		})
	}
}

func TestParseURLErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, want string }{
		{"redis://u:pw@h/0?prefix=", "prefix is empty"},
		{"redis://u:pw@h/0?prefix=a&prefix=b", "more than once"},
		{"redis://u:pw@h/0?prefix=a{b}", "brace"},
		{"redis://u:pw@h/0?min-replicas=two", "min-replicas"},
		{"redis://u:pw@h/0?min-replicas=-1", "min-replicas"},
		{"redis://u:pw@h/0?wait-timeout=soon", "wait-timeout"},
		{"redis://u:pw@h/0?wait-timeout=1us", "at least 1ms"},
		{"redis://u:pw@h/0?bogus=1", "bogus"},
		{"redis://u:pw@h/x", "database"},
		{"redis://u:pw@h/0?x=%zz", "query cannot be parsed"},
		{"redis+sentinel://u:pw@s1:26379", "master's name"},
		{"redis+sentinel://u:pw@s1:26379/m/1/2", "master's name"},
		{"redis+sentinel://u:pw@s1/m", "HOST:PORT"},
		{"redis+sentinel://u:pw@s1,s2:1/m", "HOST:PORT"},
		{"redis+sentinel://u:pw@s1:1,/m", "invalid port"},
		{"redis+sentinel://u:pw@s1:1/m/zero", "not a number"},
		{"redis+sentinel://u:pw@s1:1/m?master_name=n", "master_name"},
		{"redis+sentinel://u:pw@/m", "no Sentinel"},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			_, err := fence.OpenLocker(t.Context(), tt.raw, nil)
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("got %v, want an error matching fence.ErrInvalid", err)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestOpenLocker opens the shared server by URL, with a prefix, and
// checks that the keys the locker writes are named by it and that Close
// closes the client.
func TestOpenLocker(t *testing.T) {
	t.Parallel()
	prefix := uniquePrefix("url")
	raw := testenv.RedisURL(t)
	sep := "?"
	if strings.Contains(raw, "?") {
		sep = "&"
	}
	l, err := fence.OpenLocker(t.Context(), raw+sep+"prefix="+url.QueryEscape(prefix)+"&dial_timeout=2s", nil)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := newClient(t).Get(t.Context(), prefix+"{k}:lock").Result()
	if err != nil || v != lease.Token.String()+":"+lease.Owner {
		t.Errorf("%s{k}:lock = %q, %v; want TOKEN:OWNER of the lease", prefix, v, err)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Inspect(t.Context(), "k"); err == nil {
		t.Error("Inspect after Close succeeded; want the closed client's error")
	}
}

// FuzzParseURL: parseURL never panics, its errors match ErrInvalid and
// never show a password, and what it accepts names a client.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"redis://u:pw@h:1/0?prefix=p:&min-replicas=1&wait-timeout=1s",
		"rediss://h?dial_timeout=1s", "redis+sentinel://u:pw@a:1,b:2/m/3?prefix=x",
		"redis://h/0?x=%zz", "redis+sentinel://:pw@a:1/m?password=pw",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "redis+sentinel") {
			return
		}
		c, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q): %v does not match ErrInvalid", raw, err)
			}
			for _, pw := range redact.Passwords(u) {
				if len(pw) >= 4 && strings.Contains(err.Error(), pw) {
					t.Fatalf("parseURL(%q): %v shows the password %q", raw, err, pw)
				}
			}
			return
		}
		if (c.simple == nil) == (c.failover == nil) {
			t.Fatalf("parseURL(%q) = %+v: want one client's options", raw, c)
		}
		if c.opts.Prefix == "" || strings.ContainsAny(c.opts.Prefix, "{}") || c.opts.WaitTimeout < time.Millisecond {
			t.Fatalf("parseURL(%q) accepted options %+v", raw, c.opts)
		}
	})
}

// TestAs: As gives the client under a Locker, the caller's from New and
// the one the opener made from a URL, and nothing else.
func TestAs(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	l := newLocker(t, c, nil)
	var got goredis.UniversalClient
	if !l.As(&got) || got != goredis.UniversalClient(c) {
		t.Errorf("As(*goredis.UniversalClient) of New's Locker = %v, %v; want the client given to New", got, l.As(&got))
	}
	var other *goredis.Client
	if l.As(&other) || l.As(nil) || l.As(got) {
		t.Error("As succeeded for a target other than *goredis.UniversalClient")
	}

	opened, err := fence.OpenLocker(t.Context(), testenv.RedisURL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	var made goredis.UniversalClient
	if !opened.As(&made) {
		t.Fatal("As(*goredis.UniversalClient) of an opened Locker = false")
	}
	if err := made.Ping(t.Context()).Err(); err != nil {
		t.Errorf("Ping through the opener's client: %v", err)
	}
}
