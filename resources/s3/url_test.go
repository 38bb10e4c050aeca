package s3

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/s3conn"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/internal/testing/testenv"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url  string
		want urlConfig
	}{
		{"s3://b", urlConfig{conn: s3conn.Config{Bucket: "b"}}},
		{"s3://my.bucket-1?region=r&endpoint=http://h:1/&path-style=true", urlConfig{conn: s3conn.Config{Bucket: "my.bucket-1", Region: "r", Endpoint: "http://h:1", PathStyle: true}}},
		{"s3://b?prefix=reports/&max-key-segment=255", urlConfig{conn: s3conn.Config{Bucket: "b"}, opts: Options{Prefix: "reports/", MaxKeySegmentLen: 255}}},
		{"s3://b?prefix=", urlConfig{conn: s3conn.Config{Bucket: "b"}}},
		{"s3://b?prefix=a%20b%2F", urlConfig{conn: s3conn.Config{Bucket: "b"}, opts: Options{Prefix: "a b/"}}},
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
		"s3://",
		"s3://user:secret@b",
		"s3://b?region=",
		"s3://b?endpoint=http://user:secret@host",
		"s3://b?path-style=yes",
		"s3://b?max-key-segment=1025",
		"s3://b?prefix=a&prefix=b",
		"s3://b?table=t",
		"s3://b?password=secret",
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
		"s3://b", "s3://b?region=r&endpoint=http://h:1&path-style=true&prefix=p/&max-key-segment=255",
		"s3://u:secret@b", "s3://b?password=secret", "s3://b?max-key-segment=-1", "s3://b:1/x",
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
		if c.conn.Bucket == "" || c.opts.MaxKeySegmentLen < 0 {
			t.Fatalf("parseURL(%q) = %+v", raw, c)
		}
	})
}

// emulatorURL returns the s3:// URL of bucket on MinIO; credentials and
// region come from the environment scripts/emulators.sh sets.
func emulatorURL(t *testing.T, bucket string) string {
	t.Helper()
	return "s3://" + bucket + "?endpoint=" + url.QueryEscape(testenv.S3Endpoint(t)) + "&path-style=true&max-key-segment=255"
}

// TestOpenResource opens a bucket by URL through fence.OpenResource:
// before Create, a write gets ErrStoreMissing; Create makes the bucket
// (twice is fine); Put and Get then work, under the URL's prefix.
func TestOpenResource(t *testing.T) {
	t.Parallel()
	c := newClient(t, nil)
	bucket := emulators.UniqueName("fence-url-")
	raw := emulatorURL(t, bucket) + "&prefix=" + url.QueryEscape("under/")
	ctx := t.Context()
	r, err := fence.OpenResource(ctx, raw, nil)
	if err != nil {
		t.Fatalf("OpenResource(%s): %v", raw, err)
	}
	defer r.Close()
	if info := driver.ResourceOf(r).ResourceInfo(); r.Name() != "s3" || info.MaxKeyLen != MaxKeyLen-len("under/") {
		t.Errorf("Name = %s, ResourceInfo = %+v; want s3, %d", r.Name(), info, MaxKeyLen-len("under/"))
	}
	if err := r.Put(ctx, "k", 1, []byte("v")); !errors.Is(err, fence.ErrStoreMissing) {
		t.Fatalf("Put before Create: %v; want ErrStoreMissing", err)
	}
	for range 2 {
		if err := r.Create(ctx); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	t.Cleanup(func() { emulators.RemoveS3Bucket(t, c, bucket) })
	if err := r.Put(ctx, "k", 1, []byte("v")); err != nil {
		t.Fatalf("Put after Create: %v", err)
	}
	if v, tok, err := r.Get(ctx, "k"); err != nil || string(v) != "v" || tok != 1 {
		t.Errorf("Get = %q, %d, %v; want v, 1", v, tok, err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("under/k")}); err != nil {
		t.Errorf("the object under the prefix: %v", err)
	}
}

// TestOpenResourceWithHTTPClient: the SDK's requests go through
// OpenOptions.HTTPClient.
func TestOpenResourceWithHTTPClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rt := &counting{next: newTransport(t)}
	r, err := fence.OpenResource(t.Context(), emulatorURL(t, e.bucket), &fence.OpenOptions{HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Put(t.Context(), "k", 2, []byte("two")); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if rt.n.Load() == 0 {
		t.Error("no request went through the HTTP client of OpenOptions")
	}
	e.wantStored(t, "k", []byte("two"), 2)
}

// TestOpenErrorsAreInvalid: a bad URL is refused before any client is
// built, and a bad prefix by New.
func TestOpenErrorsAreInvalid(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"s3://b?unknown=1", "s3://b?prefix=" + strings.Repeat("p", MaxKeyLen), "s3://b?prefix=%ff"} {
		if _, err := fence.OpenResource(context.Background(), raw, nil); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("OpenResource(%.60s): %v; want ErrInvalid", raw, err)
		}
	}
}
