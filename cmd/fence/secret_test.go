package main

import (
	"net/url"
	"strings"
	"testing"
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
		{"run", nil, []string{"run", "--ttl", b.ttl, "--store", withPassword, "k", "--", "true"}, 0, true},
		{"break", nil, []string{"break", "--store", withPassword, "k"}, 0, true},
		{"init", nil, []string{"init", "--store", withPassword}, 0, true},
		{"from FENCE_STORE", testEnv(EnvStore + "=" + withPassword), []string{"inspect", "k"}, 0, false},
		{"unreachable", nil, []string{"inspect", "--store", unreachable, "k"}, exitStore, true},
		{"unreachable run", nil, []string{"run", "--store", unreachable, "k", "--", "true"}, exitStore, true},
		{"unparsable", nil, []string{"inspect", "--store", "postgres://app:" + secret + "@host:port/db", "k"}, exitUsage, false},
		{"bad parameter", nil, []string{"inspect", "--store", "postgres://app:" + secret + "@127.0.0.1/db?table=a.b.c", "k"}, exitUsage, true},
		{"cloud URL with password", nil, []string{"inspect", "--store", "dynamodb://app:" + secret + "@locks", "k"}, exitUsage, false},
		{"password parameter", nil, []string{"inspect", "--store", "postgres://app@127.0.0.1:1/none?password=" + secret, "k"}, exitStore, true},
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
