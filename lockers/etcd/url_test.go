package etcd

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/etcdclient"
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
		raw            string
		endpoints      []string
		prefix         string
		user, password string
		dial, minTTL   time.Duration
		tls            bool
	}{
		{"etcd://127.0.0.1:2379", []string{"127.0.0.1:2379"}, "", "", "", etcdclient.DefaultDialTimeout, 0, false},
		{"etcd://c,a:1,b:2/", []string{"c:2379", "a:1", "b:2"}, "", "", "", etcdclient.DefaultDialTimeout, 0, false},
		{"etcd://db/app/locks?dial-timeout=1s&min-ttl=1s", []string{"db:2379"}, "app/locks/", "", "", time.Second, time.Second, false},
		{"etcd://db/app/locks/", []string{"db:2379"}, "app/locks/", "", "", etcdclient.DefaultDialTimeout, 0, false},
		{"etcd://app:s3cret@db:1", []string{"db:1"}, "", "app", "s3cret", etcdclient.DefaultDialTimeout, 0, false},
		{"etcd://app:p%40ss@db:1", []string{"db:1"}, "", "app", "p@ss", etcdclient.DefaultDialTimeout, 0, false},
		{"etcd://[::1]:2379/x", []string{"[::1]:2379"}, "x/", "", "", etcdclient.DefaultDialTimeout, 0, false},
		{"ETCD://db", []string{"db:2379"}, "", "", "", etcdclient.DefaultDialTimeout, 0, false},
		{"etcds://db:2379", []string{"db:2379"}, "", "", "", etcdclient.DefaultDialTimeout, 0, true},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			u := mustParse(t, tt.raw)
			u.Scheme = strings.ToLower(u.Scheme)
			c, err := parseURL(u)
			if err != nil {
				t.Fatalf("parseURL: %v", err)
			}
			switch {
			case !slices.Equal(c.cfg.Endpoints, tt.endpoints):
				t.Errorf("endpoints %q, want %q", c.cfg.Endpoints, tt.endpoints)
			case c.prefix != tt.prefix:
				t.Errorf("prefix %q, want %q", c.prefix, tt.prefix)
			case c.cfg.Username != tt.user || c.cfg.Password != tt.password:
				t.Errorf("user %q password %q, want %q %q", c.cfg.Username, c.cfg.Password, tt.user, tt.password)
			case c.cfg.DialTimeout != tt.dial || c.minTTL != tt.minTTL:
				t.Errorf("dial-timeout %v min-ttl %v, want %v %v", c.cfg.DialTimeout, c.minTTL, tt.dial, tt.minTTL)
			case (c.cfg.TLS != nil) != tt.tls:
				t.Errorf("TLS %v, want %v", c.cfg.TLS != nil, tt.tls)
			}
		})
	}
}

func TestParseURLErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, want string }{
		{"etcd://", "want etcd://HOST"},
		{"etcd:opaque", "want etcd://HOST"},
		{"etcd://app:s3cret@a:1,:2", "endpoint \":2\""},
		{"etcd://app:s3cret@a:1,b:c:1", "not HOST[:PORT]"},
		{"etcd://app:s3cret@db?dial-timeout=soon", "dial-timeout"},
		{"etcd://app:s3cret@db?dial-timeout=", "dial-timeout is empty"},
		{"etcd://app:s3cret@db?min-ttl=1500ms", "min-ttl"},
		{"etcd://app:s3cret@db?min-ttl=0.5s", "min-ttl"},
		{"etcd://app:s3cret@db?ca=/x", "parameters of etcds://"},
		{"etcds://app:s3cret@db?cert=/x", "cert and key go together"},
		{"etcds://app:s3cret@db?ca=/nonexistent/ca.pem", "no such file"},
		{"etcd://app:s3cret@db?tabel=x", "unknown parameter \"tabel\""},
		{"etcd://:s3cret@db", "password without a user"},
		{"etcd://app:s3cret@db?password=s3cret", "unknown parameter"},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			_, err := parseURL(mustParse(t, tt.raw))
			if err == nil {
				t.Fatalf("parseURL succeeded; want an error with %q", tt.want)
			}
			if !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("error %v does not match fence.ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func TestParseURLBadCA(t *testing.T) {
	t.Parallel()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := parseURL(mustParse(t, "etcds://db?ca="+url.QueryEscape(ca)))
	if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("parseURL with a CA file of garbage: %v; want an invalid-input error saying so", err)
	}
}

func TestOpenLocker(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	prefix := uniquePrefix("url")
	l, err := fence.OpenLocker(ctx, "etcd://"+sharedEndpoints(t)+"/"+prefix+"?dial-timeout=2s", nil)
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer l.Close()
	if err := l.Create(ctx); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Create = %v; want an error matching errors.ErrUnsupported (etcd needs nothing created)", err)
	}
	lease, err := l.Acquire(ctx, "k", 10*time.Second, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	// The opened locker keeps its records under the URL's prefix.
	c := sharedClient(t)
	resp, err := c.Get(ctx, prefix+"held/k")
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].CreateRevision != int64(lease.Token) {
		t.Fatalf("Get(%q) = %v, %v; want the lock record of token %d", prefix+"held/k", resp, err, lease.Token)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
	var client *clientv3.Client
	if !l.As(&client) || client == nil {
		t.Fatal("As(**clientv3.Client) gave no client on the opened Locker")
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := l.Inspect(ctx, "k"); err == nil {
		t.Errorf("Inspect after Close succeeded; want an error (Close closes the client the opener made)")
	}
	if _, err := client.Get(ctx, prefix+"held/k"); err == nil {
		t.Errorf("Get through As's client after Close succeeded; want it closed")
	}
}

// A user in the URL makes the client authenticate at once; the error of a
// cluster that cannot be reached does not show the password.
func TestOpenLockerErrorHidesPassword(t *testing.T) {
	t.Parallel()
	_, err := fence.OpenLocker(t.Context(), "etcd://app:s3cret@127.0.0.1:1/?dial-timeout=200ms", nil)
	if err == nil {
		t.Fatal("OpenLocker of an unreachable cluster with a user succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q shows the password", err)
	}
	t.Logf("error: %v", err)
}
