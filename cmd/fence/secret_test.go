package main

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/fencekit/fence"
)

// TestPasswordNeverPrinted: a password in the store URL works (the test
// server trusts every connection), draws a warning when it is on the
// command line, and appears in no output, whether the call succeeds, fails
// to connect or fails to parse.
func TestPasswordNeverPrinted(t *testing.T) {
	t.Parallel()
	b := backendNamed(t, "postgres") // the one store whose URL may carry a password
	store := b.store(t)
	const secret = "Hunter2-s3cret"
	u, err := url.Parse(store)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secret)
	withPassword := u.String()
	unreachable := "postgres://app:" + secret + "@127.0.0.1:1/none?connect_timeout=5"
	tests := []struct {
		name    string
		env     []string
		args    []string
		code    int
		warning bool
	}{
		{"inspect", nil, []string{"inspect", "--store", withPassword, "k"}, 0, true},
		// A TTL far above the store's 100 ms minimum: the run must end
		// with its lease held, however loaded the machine.
		{"run", nil, []string{"run", "--ttl", "30s", "--store", withPassword, "k", "--", "true"}, 0, true},
		{"break", nil, []string{"break", "--store", withPassword, "k"}, 0, true},
		{"init", nil, []string{"init", "--store", withPassword}, 0, true},
		{"from FENCE_STORE", testEnv(EnvStore + "=" + withPassword), []string{"inspect", "k"}, 0, false},
		{"unreachable", nil, []string{"inspect", "--store", unreachable, "k"}, exitStore, true},
		{"unreachable run", nil, []string{"run", "--store", unreachable, "k", "--", "true"}, exitStore, true},
		{"unparsable", nil, []string{"inspect", "--store", "postgres://app:" + secret + "@host:port/db", "k"}, exitUsage, false},
		{"bad parameter", nil, []string{"inspect", "--store", "postgres://app:" + secret + "@127.0.0.1/db?table=a.b.c", "k"}, exitUsage, true},
		{"unparsable with @", nil, []string{"inspect", "--store", "postgres://app:" + secret + "@x@host:port/db", "k"}, exitUsage, false},
		{"unparsable with space", nil, []string{"inspect", "--store", "postgres://app:" + secret + " x@host/db", "k"}, exitUsage, false},
		// Refused by the backend, but on the command line all the same.
		{"cloud URL with password", nil, []string{"inspect", "--store", "dynamodb://app:" + secret + "@locks", "k"}, exitUsage, true},
		{"password parameter", nil, []string{"inspect", "--store", "postgres://app@127.0.0.1:1/none?password=" + secret, "k"}, exitStore, true},
		{"escaped password parameter", nil, []string{"inspect", "--store", "postgres://app@127.0.0.1:1/none?password=" + url.QueryEscape(secret+"&@") + "&connect_timeout=5", "k"}, exitStore, true},
		{"unknown scheme", nil, []string{"inspect", "--store", "nosuch://app:" + secret + "@h/db", "k"}, exitUsage, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := fenceRun(t, tt.env, tt.args...)
			wantCode(t, r, tt.code)
			if strings.Contains(r.stdout+r.stderr, secret) || strings.Contains(r.stdout+r.stderr, strings.ToLower(secret)) {
				t.Errorf("the password was printed: %v", r)
			}
			if got := strings.Contains(r.stderr, "other users can read"); got != tt.warning {
				t.Errorf("warning about ps: %v, want %v: %v", got, tt.warning, r)
			}
		})
	}
}

// TestScrub: what fence prints loses the passwords of the store URL, as
// given and as URLs escape them, and anything shaped like a URL password.
func TestScrub(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text    string
		secrets []string
		want    string
	}{
		{"connect postgres://u:s3cret@h/db failed", nil, "connect postgres://u:xxxxx@h/db failed"},
		{"dial h/db?password=s3cret&x=1", nil, "dial h/db?password=xxxxx&x=1"},
		{"server said s3cret", []string{"s3cret"}, "server said xxxxx"},
		{"escaped p%40ss, p%3As and p@ss", []string{"p@ss", "p:s"}, "escaped xxxxx, xxxxx and xxxxx"},
		{"a+b and a%20b", []string{"a b"}, "xxxxx and xxxxx"},
		{"nothing secret", []string{""}, "nothing secret"},
	}
	for _, tt := range tests {
		c := &cli{secrets: tt.secrets}
		if got := c.scrub(tt.text); got != tt.want {
			t.Errorf("scrub(%q) with secrets %q = %q, want %q", tt.text, tt.secrets, got, tt.want)
		}
	}
}

// TestPasswords: the command learns the passwords of any backend's URL,
// and refuses, without quoting it, a URL whose password it cannot find.
func TestPasswords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want []string
	}{
		{"postgres://app@db/app", nil},
		{"postgres://app:pw@db/app", []string{"pw"}},
		{"postgres://app:p%40ss@db/app?password=q&password=", []string{"p@ss", "q"}},
		{"postgres://app:p@ss@db/app", []string{"p@ss"}},
		{"nosuch://u:pw@h?password=%26x", []string{"pw", "&x"}},
		{"dynamodb://locks", nil},
	}
	for _, tt := range tests {
		got, err := passwords(tt.raw)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("passwords(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
		}
	}
	for _, raw := range []string{"postgres://u:pw@h:port/db", "postgres://u:p@w@h:port/db", "gs://u:pw x@b", "postgres://u:pw%zz@h/db"} {
		_, err := passwords(raw)
		if !errors.Is(err, fence.ErrInvalid) || strings.Contains(err.Error(), "pw") {
			t.Errorf("passwords(%q) = %v; want an error matching fence.ErrInvalid that shows no password", raw, err)
		}
	}
}
