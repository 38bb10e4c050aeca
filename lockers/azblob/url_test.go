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
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/probe"
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
	tests := []struct {
		raw  string
		want config
	}{
		{"azblob://locks", config{container: "locks"}},
		{"azblob://locks/", config{container: "locks"}},
		{"azblob://ops-locks-1?account=acct&endpoint=https://acct.blob.core.windows.net/",
			config{container: "ops-locks-1", account: "acct", endpoint: "https://acct.blob.core.windows.net"}},
		{"azblob://abc?endpoint=http://127.0.0.1:10000/devstoreaccount1", config{container: "abc", endpoint: "http://127.0.0.1:10000/devstoreaccount1"}},
		{"azblob://" + strings.Repeat("a", 63) + "?account=" + strings.Repeat("9", 24), config{container: strings.Repeat("a", 63), account: strings.Repeat("9", 24)}},
		{"azblob://locks?probe-interval=50ms", config{container: "locks", probe: 50 * time.Millisecond}},
		{"azblob://locks?probe-interval=off", config{container: "locks", probe: probe.Off}},
	}
	for _, tt := range tests {
		got, err := parseURL(mustParse(t, tt.raw))
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
		{"azblob://?account=abc", "no container name"},
		{"azblob://locks:10000", "no port"},
		{"azblob://locks?probe-interval=1ms", "below 10ms"},
		{"azblob://locks/extra", "unexpected path"},
		{"azblob://user:s3cretpw@locks", "credentials come from the environment"},
		{"azblob://locks?key=abc", `unknown parameter "key"`},
		{"azblob://locks?password=s3cretpw", `unknown parameter "password"`},
		{"azblob://locks?account=", "account is empty"},
		{"azblob://locks?account=abc&account=def", "more than once"},
		{"azblob://locks?endpoint=localhost:10000", "not an http:// or https:// URL"},
		{"azblob://locks?endpoint=http://u:s3cretpw@localhost:10000", "user information"},
		{"azblob://locks?endpoint=http%3A%2F%2Fu%3As3cretpw%40localhost", "user information"},
		{"azblob://Locks", "not an Azure container name"},
		{"azblob://ab", "not an Azure container name"},
		{"azblob://" + strings.Repeat("a", 64), "not an Azure container name"},
		{"azblob://-locks", "not an Azure container name"},
		{"azblob://locks-", "not an Azure container name"},
		{"azblob://lo--cks", "not an Azure container name"},
		{"azblob://lo_cks", "not an Azure container name"},
		{"azblob://locks?account=ab", "not an Azure storage account name"},
		{"azblob://locks?account=Acct", "not an Azure storage account name"},
		{"azblob://locks?account=evil.example%23", "not an Azure storage account name"},
		{"azblob://locks?account=" + strings.Repeat("a", 25), "not an Azure storage account name"},
	}
	for _, tt := range tests {
		_, err := parseURL(mustParse(t, tt.raw))
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("parseURL(%q) = %v; want an error matching fence.ErrInvalid", tt.raw, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseURL(%q) = %v; want it to say %q", tt.raw, err, tt.want)
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("parseURL(%q) shows the password: %v", tt.raw, err)
		}
	}
}

// FuzzParseURL checks that parseURL never panics, refuses with
// fence.ErrInvalid only, accepts only container and account names Azure
// takes, and never shows a password: the fuzzed URL with a password in
// its user information or in a password parameter is refused without it.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"azblob://locks", "azblob://locks?account=acct&endpoint=https://acct.blob.core.windows.net",
		"azblob://a:b@c", "azblob://c:1/p?x=%zz", "azblob://lo--cks?account=A", "azblob://locks?endpoint=http://u:p@h",
	} {
		f.Add(s)
	}
	const secret = "Zq9XsEcReTXq9Z"
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		cfg, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q) = %v, not matching fence.ErrInvalid", raw, err)
			}
		} else {
			if !validContainer(cfg.container) || cfg.account != "" && !validAccount(cfg.account) {
				t.Fatalf("parseURL(%q) accepted %+v", raw, cfg)
			}
			if cfg.endpoint != "" && !strings.HasPrefix(cfg.endpoint, "http://") && !strings.HasPrefix(cfg.endpoint, "https://") {
				t.Fatalf("parseURL(%q) accepted the endpoint %q", raw, cfg.endpoint)
			}
		}
		if strings.Contains(raw, secret) {
			return
		}
		withUser := *u
		withUser.User = url.UserPassword("u", secret)
		withParam := *u
		q := withParam.Query()
		q.Add("password", secret)
		withParam.RawQuery = q.Encode()
		for _, v := range []*url.URL{&withUser, &withParam} {
			_, err := parseURL(v)
			if err == nil {
				t.Fatalf("parseURL(%q) accepted a password", v)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("parseURL(%q) = %v shows the password", v, err)
			}
		}
	})
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

// TestOpenCredentials opens lockers on Azurite with each kind of
// credentials the environment can hold, and checks that an unusable
// environment is refused with fence.ErrInvalid without showing a secret.
func TestOpenCredentials(t *testing.T) {
	t.Parallel()
	endpoint, account, accountKey := azuriteEndpoint(t)
	conn := testenv.AzuriteConnectionString(t)
	shared := newContainer(t, nil, false)
	name := path.Base(shared.URL())
	sasURL, err := shared.GetSASURL(sas.ContainerPermissions{Read: true, Write: true, Create: true, Add: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatalf("GetSASURL: %v", err)
	}
	_, sasToken, _ := strings.Cut(sasURL, "?")
	q := "?endpoint=" + url.QueryEscape(endpoint)
	elsewhere := strings.Replace(conn, endpoint, "http://127.0.0.1:1/"+account, 1)
	if elsewhere == conn {
		t.Fatalf("the connection string does not name the endpoint %s", endpoint)
	}
	tests := []struct {
		name, url string
		env       env
	}{
		{"connection string", "azblob://" + name, env{EnvConnectionString: conn}},
		{"account key", "azblob://" + name + q, env{EnvAccount: account, EnvAccountKey: accountKey}},
		{"account in the URL", "azblob://" + name + q + "&account=" + account, env{EnvAccountKey: accountKey}},
		{"account in the URL wins", "azblob://" + name + q + "&account=" + account, env{EnvAccount: "other", EnvAccountKey: accountKey}},
		{"connection string set aside for an endpoint", "azblob://" + name + q, env{EnvConnectionString: "junk", EnvAccount: account, EnvAccountKey: accountKey}},
		{"SAS token", "azblob://" + name + q, env{EnvAccount: account, EnvSASToken: sasToken}},
		{"SAS token with its ?", "azblob://" + name + q, env{EnvAccount: account, EnvSASToken: "?" + sasToken}},
		// The URL's endpoint, not the string's (which no server answers).
		{"connection string's account for an endpoint", "azblob://" + name + q, env{EnvConnectionString: elsewhere}},
		{"connection string's SAS token for an endpoint", "azblob://" + name + q,
			env{EnvConnectionString: "BlobEndpoint=http://127.0.0.1:1/" + account + ";SharedAccessSignature=" + sasToken}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opened, err := open(mustParse(t, tt.url), nil, tt.env.get)
			if err != nil {
				t.Fatalf("open(%q): %v", tt.url, err)
			}
			acquireRelease(t, opened)
		})
	}
	bad := []struct {
		name, url string
		env       env
		secret    string
	}{
		{"nothing", "azblob://" + name, env{}, ""},
		{"account without a secret", "azblob://" + name + "?account=" + account, env{EnvConnectionString: conn}, ""},
		{"connection string unusable", "azblob://" + name, env{EnvConnectionString: "AccountKey=s3cretkey;junk"}, "s3cretkey"},
		{"connection string unusable for an endpoint", "azblob://" + name + q, env{EnvConnectionString: "AccountKey=s3cretkey;junk"}, "s3cretkey"},
		{"connection string's key unusable for an endpoint", "azblob://" + name + q, env{EnvConnectionString: "AccountName=" + account + ";AccountKey=s3cretkey!"}, "s3cretkey"},
		{"account key unusable", "azblob://" + name, env{EnvAccount: account, EnvAccountKey: "s3cretkey!"}, "s3cretkey"},
	}
	for _, tt := range bad {
		_, err := open(mustParse(t, tt.url), nil, tt.env.get)
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
