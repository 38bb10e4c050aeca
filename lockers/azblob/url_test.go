package azblob

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// TestParseURL checks what the locker reads besides azblobconn.Parse:
// the probe interval, and the problems of both met in one URL.
func TestParseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want config
	}{
		{"azblob://locks", config{Config: azblobconn.Config{Container: "locks"}}},
		{"azblob://locks?account=acct&endpoint=http://127.0.0.1:10000/acct", config{Config: azblobconn.Config{Container: "locks", Account: "acct", Endpoint: "http://127.0.0.1:10000/acct"}}},
		{"azblob://locks?probe-interval=50ms", config{Config: azblobconn.Config{Container: "locks"}, probe: 50 * time.Millisecond}},
		{"azblob://locks?probe-interval=off", config{Config: azblobconn.Config{Container: "locks"}, probe: probe.Off}},
	}
	for _, tt := range tests {
		got, err := parseURL(azuritetest.ParseURL(t, tt.raw))
		if err != nil || got != tt.want {
			t.Errorf("parseURL(%q) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
		}
	}
}

func TestParseURLErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, want string
	}{
		{"azblob://", "no container name"},
		{"azblob://locks?probe-interval=1ms", "below 10ms"},
		{"azblob://Locks?probe-interval=1s", "not an Azure container name"},
		{"azblob://locks?prefix=p", `unknown parameter "prefix"`},
		{"azblob://locks?endpoint=http://u:s3cretpw@localhost:10000", "user information"},
	}
	for _, tt := range tests {
		_, err := parseURL(azuritetest.ParseURL(t, tt.raw))
		if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("parseURL(%q) = %v; want an error matching fence.ErrInvalid that says %q and shows no password", tt.raw, err, tt.want)
		}
	}
}

// TestEnvNames: the package names the variables azblobconn reads.
func TestEnvNames(t *testing.T) {
	if EnvConnectionString != azblobconn.EnvConnectionString || EnvAccount != azblobconn.EnvAccount || EnvAccountKey != azblobconn.EnvAccountKey || EnvSASToken != azblobconn.EnvSASToken {
		t.Errorf("%s %s %s %s; azblobconn reads %s %s %s %s", EnvConnectionString, EnvAccount, EnvAccountKey, EnvSASToken, azblobconn.EnvConnectionString, azblobconn.EnvAccount, azblobconn.EnvAccountKey, azblobconn.EnvSASToken)
	}
}

// env is a fake environment.
type env map[string]string

func (e env) get(name string) string { return e[name] }

// roundTripper counts the requests it forwards.
type roundTripper struct{ n atomic.Int64 }

func (r *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r.n.Add(1)
	return http.DefaultTransport.RoundTrip(req)
}

// acquireRelease takes a key with l and releases it, failing t on error.
func acquireRelease(t *testing.T, l caller) fence.Lease {
	t.Helper()
	lease := mustAcquire(t, l, key(t), MinTTL, nil)
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
	return lease
}

// azuriteEndpoint returns Azurite's blob endpoint, account and key.
func azuriteEndpoint(t *testing.T) (endpoint, account, key string) {
	t.Helper()
	account, key = testenv.AzuriteAccount(t)
	return testenv.AzuriteBlobURL(t), account, key
}

// TestOpenCredentials opens lockers on Azurite with credentials from
// the environment given to open (azblobconn's tests cover each kind), and
// checks that an unusable environment is refused with a fence/azblob
// error matching fence.ErrInvalid without showing a secret.
func TestOpenCredentials(t *testing.T) {
	t.Parallel()
	endpoint, account, accountKey := azuriteEndpoint(t)
	name := path.Base(azuritetest.NewContainer(t, nil, false).URL())
	q := "?endpoint=" + url.QueryEscape(endpoint)
	for _, tt := range []struct {
		name, url string
		env       env
	}{
		{"connection string", "azblob://" + name, env{EnvConnectionString: testenv.AzuriteConnectionString(t)}},
		{"account key", "azblob://" + name + q, env{EnvAccount: account, EnvAccountKey: accountKey}},
	} {
		opened, err := open(azuritetest.ParseURL(t, tt.url), nil, tt.env.get)
		if err != nil {
			t.Fatalf("open(%q) with %s: %v", tt.url, tt.name, err)
		}
		acquireRelease(t, opened)
	}
	for _, tt := range []struct {
		name, url string
		env       env
		secret    string
	}{
		{"nothing", "azblob://" + name, env{}, ""},
		{"account key unusable", "azblob://" + name, env{EnvAccount: account, EnvAccountKey: "s3cretkey!"}, "s3cretkey"},
	} {
		_, err := open(azuritetest.ParseURL(t, tt.url), nil, tt.env.get)
		if !errors.Is(err, fence.ErrInvalid) || !strings.HasPrefix(err.Error(), "fence/azblob: open: ") {
			t.Errorf("open(%q) with %s: %v; want a fence/azblob error matching fence.ErrInvalid", tt.url, tt.name, err)
		}
		if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
			t.Errorf("open(%q) with %s: %v shows the secret", tt.url, tt.name, err)
		}
	}
}

// TestOpenLocker opens a locker with fence.OpenLocker from the
// process environment, as the command does: the container is missing
// until Create creates it; then Acquire and Release work, every request
// goes through OpenOptions.HTTPClient, and ValidUntil is read on
// OpenOptions.Clock. It sets the environment, so it does not run in
// parallel.
func TestOpenLocker(t *testing.T) {
	for _, name := range []string{EnvAccount, EnvAccountKey, EnvSASToken} {
		t.Setenv(name, "")
	}
	t.Setenv(EnvConnectionString, testenv.AzuriteConnectionString(t))
	name := "fence-open-" + strings.ToLower(key(t)[2:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := container.NewClientFromConnectionString(testenv.AzuriteConnectionString(t), name, nil)
		if err == nil {
			_, _ = c.Delete(ctx, nil)
		}
	})
	rt := &roundTripper{}
	clock := clocktest.New(time.Now())
	l, err := fence.OpenLocker(t.Context(), "azblob://"+name, &fence.OpenOptions{HTTPClient: &http.Client{Transport: rt}, Clock: clock})
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if l.Name() != "azblob" {
		t.Errorf("Name() = %q; want azblob", l.Name())
	}
	if _, err := l.Acquire(t.Context(), key(t), MinTTL, nil); !errors.Is(err, fence.ErrStoreMissing) {
		t.Fatalf("Acquire before Create: %v; want an error matching fence.ErrStoreMissing", err)
	}
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	lease := acquireRelease(t, l)
	if want := clock.Now().Add(MinTTL); !lease.ValidUntil.Equal(want) {
		t.Errorf("ValidUntil = %v; want %v, on the Clock of OpenOptions", lease.ValidUntil, want)
	}
	if rt.n.Load() < 5 {
		t.Errorf("%d requests went through OpenOptions.HTTPClient; want every one, at least 5", rt.n.Load())
	}
	if _, forms := driver.LockerSchemes(); !strings.Contains(strings.Join(forms, " "), "azblob://CONTAINER") {
		t.Errorf("driver.LockerSchemes() forms = %q; want the azblob form", forms)
	}
}
