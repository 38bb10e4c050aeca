package gcs

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/testenv"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url  string
		want urlConfig
	}{
		{"gs://b", urlConfig{bucket: "b"}},
		{"gs://b/", urlConfig{bucket: "b"}},
		{"gs://my_bucket.example.com?project=p-1", urlConfig{bucket: "my_bucket.example.com", project: "p-1"}},
		{"gs://b?endpoint=http://127.0.0.1:4443/", urlConfig{bucket: "b", endpoint: "http://127.0.0.1:4443"}},
		{"gs://b?prefix=reports/", urlConfig{bucket: "b", prefix: "reports/"}},
		{"gs://b?prefix=", urlConfig{bucket: "b"}},
		{"gs://b?prefix=a%20b%2F", urlConfig{bucket: "b", prefix: "a b/"}},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseURL(u)
		if err != nil || got != tc.want {
			t.Errorf("parseURL(%s) = %+v, %v; want %+v", tc.url, got, err, tc.want)
		}
	}
}

func TestParseURLRefuses(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"gs://",
		"gs:///b",
		"gs://b:443",
		"gs://b/object",
		"gs://user:secret@b",
		"gs://b?project=",
		"gs://b?project=a&project=b",
		"gs://b?prefix=a&prefix=b",
		"gs://b?endpoint=",
		"gs://b?endpoint=gs://other",
		"gs://b?endpoint=https://user:secret@host",
		"gs://b?trusted-clock=true",
		"gs://b?password=secret",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseURL(u)
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("parseURL(%s) = %v; want ErrInvalid", raw, err)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("parseURL(%s) = %v: the password shows", raw, err)
		}
	}
}

// FuzzParseURL: parseURL never panics, fails only with fence.ErrInvalid,
// never shows a password, and what it accepts names a bucket.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"gs://b", "gs://b?prefix=p/&project=x&endpoint=http://h:1", "gs://u:secret@b",
		"gs://b?password=secret", "gs://b?endpoint=ftp://x", "gs://b:1/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		c, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("parseURL(%q) = %v; want ErrInvalid", raw, err)
			}
			if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(err.Error(), pw) {
				t.Fatalf("parseURL(%q) = %v shows the password", raw, err)
			}
			return
		}
		if c.bucket == "" {
			t.Fatalf("parseURL(%q) = %+v without a bucket", raw, c)
		}
	})
}

// TestOpenResource opens a bucket by URL: before Create, a write gets
// ErrStoreMissing; Create makes the bucket (twice is fine); Put and Get
// then work, under the URL's prefix.
func TestOpenResource(t *testing.T) {
	t.Parallel()
	bucket := uniqueName("fence-url-")
	raw := "gs://" + bucket + "?endpoint=" + url.QueryEscape(testenv.GCSEndpoint(t)) + "&prefix=under/"
	ctx := t.Context()
	r, err := fence.OpenResource(ctx, raw, nil)
	if err != nil {
		t.Fatalf("OpenResource(%s): %v", raw, err)
	}
	defer r.Close()
	if info := driver.ResourceOf(r).ResourceInfo(); r.Name() != "gcs" || info.MaxKeyLen != MaxKeyLen-len("under/") {
		t.Errorf("Name = %s, ResourceInfo = %+v; want gcs, %d", r.Name(), info, MaxKeyLen-len("under/"))
	}
	if err := r.Put(ctx, "k", 1, []byte("v")); !errors.Is(err, fence.ErrStoreMissing) {
		t.Fatalf("Put before Create: %v; want ErrStoreMissing", err)
	}
	// A second resource on the URL, with a client of its own, creates
	// the bucket and closes its client.
	opened, err := fence.OpenResource(ctx, raw, nil)
	if err != nil {
		t.Fatalf("OpenResource(%s): %v", raw, err)
	}
	for range 2 {
		if err := opened.Create(ctx); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	if err := opened.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := r.Put(ctx, "k", 1, []byte("v")); err != nil {
		t.Fatalf("Put after Create: %v", err)
	}
	if v, tok, err := r.Get(ctx, "k"); err != nil || string(v) != "v" || tok != 1 {
		t.Errorf("Get = %q, %d, %v; want v, 1", v, tok, err)
	}
	if _, err := newClient(t, nil).Bucket(bucket).Object("under/k").Attrs(ctx); err != nil {
		t.Errorf("the object under the prefix: %v", err)
	}
}

// countingTransport counts the requests it forwards.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// TestOpenResourceWithHTTPClient: the SDK's requests go through
// OpenOptions.HTTPClient.
func TestOpenResourceWithHTTPClient(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t, newClient(t, nil)).BucketName()
	rt := &countingTransport{next: newFaultTransport(t).next}
	raw := "gs://" + bucket + "?endpoint=" + url.QueryEscape(testenv.GCSEndpoint(t))
	r, err := fence.OpenResource(t.Context(), raw, &fence.OpenOptions{HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mustPut(t, r, "k", 2, []byte("two"))
	wantValue(t, r, "k", "two", 2)
	if rt.n.Load() == 0 {
		t.Error("no request went through the HTTP client of OpenOptions")
	}
}

// TestOpenErrorsAreInvalid: a bad URL is refused before any client is
// built, and a bad prefix by New.
func TestOpenErrorsAreInvalid(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"gs://b?unknown=1", "gs://b?prefix=" + strings.Repeat("p", MaxKeyLen), "gs://b?prefix=a%0A"} {
		if _, err := fence.OpenResource(context.Background(), raw, nil); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("OpenResource(%.60s): %v; want ErrInvalid", raw, err)
		}
	}
}

// TestCreateNeedsAProject: off an emulator, Create without a project asks
// for one and sends nothing. Not parallel: it changes the environment.
func TestCreateNeedsAProject(t *testing.T) {
	t.Setenv(envEmulatorHost, "")
	t.Setenv(envGoogleProject, "")
	err := urlConfig{bucket: "b"}.createBucket(t.Context(), offlineBucket(t))
	if !errors.Is(err, fence.ErrInvalid) || !strings.Contains(err.Error(), "project") {
		t.Errorf("Create without a project: %v; want ErrInvalid asking for one", err)
	}
}
