package azblob

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// TestParseURL checks what the resource reads besides azblobconn.Parse:
// the prefix, and the problems of both met in one URL.
func TestParseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want config
	}{
		{"azblob://reports", config{Config: azblobconn.Config{Container: "reports"}}},
		{"azblob://ops-1?account=acct&endpoint=https://acct.blob.core.windows.net/&prefix=acme/",
			config{Config: azblobconn.Config{Container: "ops-1", Account: "acct", Endpoint: "https://acct.blob.core.windows.net"}, opts: Options{Prefix: "acme/"}}},
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
	for _, raw := range []string{
		"azblob://",
		"azblob://user:s3cretpw@reports",
		"azblob://reports?endpoint=http://u:s3cretpw@localhost:10000",
		"azblob://Reports?prefix=p",
		"azblob://reports?prefix=a&prefix=b",
		"azblob://reports?probe-interval=1s",
	} {
		_, err := parseURL(azuritetest.ParseURL(t, raw))
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("parseURL(%q): %v; want fence.ErrInvalid", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("parseURL(%q): %v shows the password", raw, err)
		}
	}
}

// The opener builds its client with the environment given to open
// (azblobconn's tests cover each kind of credentials), and refuses with
// fence.ErrInvalid when there are none.
func TestOpenCredentials(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + azuriteKey + ";BlobEndpoint=http://127.0.0.1:1/devstoreaccount1;"
	for name, tc := range map[string]struct {
		raw string
		env map[string]string
		ok  bool
	}{
		"connection string":          {"azblob://reports", map[string]string{EnvConnectionString: conn}, true},
		"endpoint, connection":       {"azblob://reports?endpoint=http://127.0.0.1:2/devstoreaccount1", map[string]string{EnvConnectionString: conn}, true},
		"account and key":            {"azblob://reports?account=devstoreaccount1", map[string]string{EnvAccountKey: azuriteKey}, true},
		"account from env, SAS":      {"azblob://reports", map[string]string{EnvAccount: "acct", EnvSASToken: "?sv=x&sig=y"}, true},
		"none":                       {"azblob://reports", nil, false},
		"account without secret":     {"azblob://reports?account=acct", nil, false},
		"bad connection string":      {"azblob://reports", map[string]string{EnvConnectionString: "nonsense"}, false},
		"endpoint, bad conn. string": {"azblob://reports?endpoint=http://127.0.0.1:2/x", map[string]string{EnvConnectionString: "AccountName=a"}, false},
	} {
		r, err := open(azuritetest.ParseURL(t, tc.raw), nil, env(tc.env))
		switch {
		case tc.ok && (err != nil || r.Name() != backendName):
			t.Errorf("%s: open(%q) = %v, %v; want a resource", name, tc.raw, r, err)
		case !tc.ok && !errors.Is(err, fence.ErrInvalid):
			t.Errorf("%s: open(%q): %v; want fence.ErrInvalid", name, tc.raw, err)
		}
		if err != nil && strings.Contains(err.Error(), azuriteKey) {
			t.Errorf("%s: the error shows the key: %v", name, err)
		}
	}
}

// The scheme azblob is registered for fence.OpenResource.
func TestSchemeRegistered(t *testing.T) {
	t.Parallel()
	schemes, _ := driver.ResourceSchemes()
	if !slices.Contains(schemes, "azblob") {
		t.Fatalf("resource schemes %v; want azblob among them", schemes)
	}
}

// A URL opens a container on Azurite; Create makes it (twice is no
// error), and the prefix names the blobs.
func TestOpenResourceOnAzurite(t *testing.T) {
	t.Parallel()
	name := "fence-url-" + strings.ToLower(key(t)[2:])
	conn := testenv.AzuriteConnectionString(t)
	raw := "azblob://" + name + "?endpoint=" + url.QueryEscape(testenv.AzuriteBlobURL(t)) + "&prefix=acme/"
	r, err := open(azuritetest.ParseURL(t, raw), nil, func(k string) string {
		if k == EnvConnectionString {
			return conn
		}
		return ""
	})
	if err != nil {
		t.Fatalf("OpenResource(%q): %v", raw, err)
	}
	defer r.Close()
	if err := r.Put(t.Context(), "k", 1, nil); !errors.Is(err, fence.ErrStoreMissing) {
		t.Fatalf("Put before Create: %v; want fence.ErrStoreMissing", err)
	}
	for range 2 {
		if err := r.Create(t.Context()); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	c := containerClient(t, name, nil)
	t.Cleanup(func() { _, _ = c.Delete(t.Context(), nil) })
	if err := r.Put(t.Context(), "k", 1, []byte("v")); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if _, err := c.NewBlobClient("acme/k").GetProperties(t.Context(), nil); err != nil {
		t.Fatalf("the blob acme/k: %v", err)
	}
}

// A missing container gets fence.ErrStoreMissing from every method.
func TestMissingContainer(t *testing.T) {
	t.Parallel()
	r := testResource(t, containerClient(t, "fence-none-"+strings.ToLower(key(t)[2:]), nil), fastOptions)
	for name, call := range map[string]func() error{
		"Put":     func() error { return r.Put(t.Context(), "k", 1, nil) },
		"Get":     func() error { _, _, err := r.Get(t.Context(), "k"); return err },
		"Delete":  func() error { return r.Delete(t.Context(), "k", 1) },
		"Highest": func() error { _, err := r.Highest(t.Context(), "k"); return err },
		"Claim":   func() error { return r.Claim(t.Context(), "k", 1) },
	} {
		if err := call(); !errors.Is(err, fence.ErrStoreMissing) {
			t.Errorf("%s: %v; want fence.ErrStoreMissing", name, err)
		}
	}
}
