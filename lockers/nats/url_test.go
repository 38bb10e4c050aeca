package nats

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]urlConfig{
		"nats://127.0.0.1?bucket=locks": {servers: []string{"nats://127.0.0.1:4222"}, bucket: "locks", dialTimeout: DefaultDialTimeout},
		"nats://a:1,b,c:3?bucket=b&replicas=3&dial-timeout=2s&name=app": {
			servers: []string{"nats://a:1", "nats://b:4222", "nats://c:3"}, bucket: "b", replicas: 3, dialTimeout: 2 * time.Second, name: "app",
		},
		"nats://u:p%40ss@h?bucket=b":         {servers: []string{"nats://h:4222"}, bucket: "b", user: "u", pass: "p@ss", dialTimeout: DefaultDialTimeout},
		"nats://s3cr3t@h?bucket=b":           {servers: []string{"nats://h:4222"}, bucket: "b", token: "s3cr3t", dialTimeout: DefaultDialTimeout},
		"nats://h?bucket=b&creds=/x/u.creds": {servers: []string{"nats://h:4222"}, bucket: "b", creds: "/x/u.creds", dialTimeout: DefaultDialTimeout},
		"nats://h?bucket=b&nkey=/x/u.nk":     {servers: []string{"nats://h:4222"}, bucket: "b", nkey: "/x/u.nk", dialTimeout: DefaultDialTimeout},
		"nats://h?bucket=b&tls=true":         {servers: []string{"nats://h:4222"}, bucket: "b", tls: true, dialTimeout: DefaultDialTimeout},
		"nats://h?bucket=b&cert=c.pem&key=k.pem&ca=ca.pem": {
			servers: []string{"nats://h:4222"}, bucket: "b", tls: true, cert: "c.pem", key: "k.pem", ca: "ca.pem", dialTimeout: DefaultDialTimeout,
		},
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseURL(u)
		if err != nil {
			t.Errorf("parseURL(%s): %v", raw, err)
			continue
		}
		if !slices.Equal(got.servers, want.servers) {
			t.Errorf("parseURL(%s): servers %v; want %v", raw, got.servers, want.servers)
		}
		if !equalConfig(got, want) {
			t.Errorf("parseURL(%s) = %+v; want %+v", raw, got, want)
		}
	}
}

func equalConfig(a, b urlConfig) bool {
	a.servers, b.servers = nil, nil
	return a.bucket == b.bucket && a.replicas == b.replicas && a.user == b.user && a.pass == b.pass && a.token == b.token &&
		a.creds == b.creds && a.nkey == b.nkey && a.tls == b.tls && a.ca == b.ca && a.cert == b.cert && a.key == b.key &&
		a.dialTimeout == b.dialTimeout && a.name == b.name
}

func TestParseURLRefuses(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"nats://h",            // no bucket
		"nats://h?bucket=",    // empty bucket
		"nats://h?bucket=a.b", // not a bucket name
		"nats://h?bucket=" + strings.Repeat("b", 65),
		"nats://h/locks?bucket=b", // a path
		"nats://h?bucket=b&replicas=0",
		"nats://h?bucket=b&replicas=6",
		"nats://h?bucket=b&replicas=three",
		"nats://h?bucket=b&cert=c.pem",         // cert without key
		"nats://u:secretpw@h?bucket=b&creds=f", // two ways to authenticate
		"nats://:secretpw@h?bucket=b",          // a password without a user
		"nats://h?bucket=b&tls=maybe",
		"nats://h?bucket=b&dial-timeout=soon",
		"nats://h?bucket=b&prefix=x", // unknown parameter
		"nats://h:x?bucket=b",
		"nats:opaque",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			continue // refused before any opener
		}
		_, err = parseURL(u)
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("parseURL(%s) = %v; want an error matching fence.ErrInvalid", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "secretpw") {
			t.Errorf("parseURL(%s): the error shows the password: %v", raw, err)
		}
	}
}

// TestOpenURL opens the shared server by URL, creates the bucket with the
// Locker's Create, and takes a lock.
func TestOpenURL(t *testing.T) {
	t.Parallel()
	base := sharedURL(t)
	bucket := uniqueBucket("url")
	l, err := fence.OpenLocker(t.Context(), base+"?bucket="+bucket+"&name=fence-url-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	if _, err := l.Inspect(t.Context(), "k"); !errors.Is(err, fence.ErrStoreMissing) {
		t.Fatalf("Inspect before Create: %v; want fence.ErrStoreMissing", err)
	}
	if err := l.Create(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, js := connect(t, base)
	t.Cleanup(func() { _ = js.DeleteKeyValue(context.Background(), bucket) })
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
}
