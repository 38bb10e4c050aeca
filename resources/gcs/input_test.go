package gcs

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// offlineBucket returns a bucket handle whose client fails the test on
// any request: input checks must refuse before any I/O.
func offlineBucket(t *testing.T) *storage.BucketHandle {
	t.Helper()
	rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		t.Errorf("unexpected request %s %s", req.Method, req.URL)
		return nil, errors.New("no requests in this test")
	})
	c, err := storage.NewClient(t.Context(),
		option.WithEndpoint("http://127.0.0.1:1/storage/v1/"),
		option.WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c.Bucket("offline")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestKeyRules checks keys against Cloud Storage's rules for object
// names: the portable layer's (length, UTF-8, NUL) and the driver's own
// (no CR or LF, not "." or "..", not under .well-known/acme-challenge/),
// with and without a prefix.
func TestKeyRules(t *testing.T) {
	t.Parallel()
	bare := testResource(t, offlineBucket(t), nil)
	pre := testResource(t, offlineBucket(t), &Options{Prefix: "p/"})
	for _, tc := range []struct {
		r   *fence.Resource
		key string
		ok  bool
	}{
		{bare, "a", true},
		{bare, "dir/file.txt", true},
		{bare, "名前/😀", true},
		{bare, "...", true},
		{bare, "./a", true},
		{bare, strings.Repeat("a", MaxKeyLen), true},
		{bare, strings.Repeat("é", MaxKeyLen/2), true},
		{bare, ".well-known/acme", true},
		{bare, "", false},
		{bare, strings.Repeat("a", MaxKeyLen+1), false},
		{bare, strings.Repeat("é", MaxKeyLen/2) + "a", false},
		{bare, ".", false},
		{bare, "..", false},
		{bare, "a\nb", false},
		{bare, "a\rb", false},
		{bare, "line\r\n", false},
		{bare, "nul\x00", false},
		{bare, "bad\xffutf8", false},
		{bare, ".well-known/acme-challenge/x", false},
		{pre, ".", true}, // the object p/.
		{pre, "..", true},
		{pre, strings.Repeat("a", MaxKeyLen-2), true},
		{pre, strings.Repeat("a", MaxKeyLen-1), false},
		{pre, "a\nb", false},
	} {
		err := driver.ValidateKey("key", tc.key, driver.ResourceOf(tc.r).ResourceInfo().MaxKeyLen)
		if err == nil {
			_, err = bucketIn(t, tc.r).objectName(tc.key)
		}
		var ie *fence.InvalidError
		if tc.ok && err != nil {
			t.Errorf("key %.40q (prefix %q) = %v; want nil", tc.key, bucketIn(t, tc.r).prefix, err)
		}
		if !tc.ok && (!errors.As(err, &ie) || ie.Field != "key") {
			t.Errorf("key %.40q (prefix %q) = %v; want a *fence.InvalidError for the key", tc.key, bucketIn(t, tc.r).prefix, err)
		}
	}
}

func TestBadInputSendsNothing(t *testing.T) {
	t.Parallel()
	r := testResource(t, offlineBucket(t), nil)
	ctx := t.Context()
	long := strings.Repeat("x", MaxKeyLen+1)
	for _, tc := range []struct {
		desc string
		call func() error
	}{
		{"Put CR LF key", func() error { return r.Put(ctx, "a\r\nb", 1, nil) }},
		{"Put dot key", func() error { return r.Put(ctx, ".", 1, nil) }},
		{"Put long key", func() error { return r.Put(ctx, long, 1, nil) }},
		{"Put token 0", func() error { return r.Put(ctx, "a", 0, nil) }},
		{"Delete dot-dot", func() error { return r.Delete(ctx, "..", 1) }},
		{"Delete token 0", func() error { return r.Delete(ctx, "a", 0) }},
		{"Get long key", func() error { _, _, err := r.Get(ctx, long); return err }},
		{"Highest LF key", func() error { _, err := r.Highest(ctx, "a\n"); return err }},
		{"NewReader empty key", func() error { _, err := NewReader(ctx, r, ""); return err }},
		{"NewReader acme key", func() error { _, err := NewReader(ctx, r, ".well-known/acme-challenge/t"); return err }},
		{"Upload CR key", func() error { _, err := Upload(ctx, r, "a\r", 1, nil, nil); return err }},
		{"Upload token 0", func() error { _, err := Upload(ctx, r, "a", 0, nil, nil); return err }},
		{"Upload reserved metadata", func() error {
			_, err := Upload(ctx, r, "a", 1, nil, &UploadOptions{Metadata: map[string]string{"FenceToken": "9"}})
			return err
		}},
		{"Upload reserved prefix", func() error {
			_, err := Upload(ctx, r, "a", 1, nil, &UploadOptions{Metadata: map[string]string{"fenceOwner": "me"}})
			return err
		}},
		{"Upload long write id", func() error {
			_, err := Upload(ctx, r, "a", 1, nil, &UploadOptions{WriteID: strings.Repeat("w", 129)})
			return err
		}},
		{"Upload write id with a newline", func() error {
			_, err := Upload(ctx, r, "a", 1, nil, &UploadOptions{WriteID: "a\nb"})
			return err
		}},
	} {
		if err := tc.call(); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s = %v; want ErrInvalid", tc.desc, err)
		}
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	b := offlineBucket(t)
	for _, tc := range []struct {
		desc   string
		bucket *storage.BucketHandle
		opts   *Options
		ok     bool
	}{
		{"defaults", b, nil, true},
		{"zero options", b, &Options{}, true},
		{"short backoffs", b, fastOptions, true},
		{"nil bucket", nil, nil, false},
		{"negative conflict backoff", b, &Options{ConflictBackoff: -1}, false},
		{"negative rate-limit backoff", b, &Options{RateLimitBackoff: -time.Second}, false},
		{"max below first pause", b, &Options{MaxBackoff: time.Millisecond}, false},
		{"negative attempts", b, &Options{MaxAttempts: -1}, false},
		{"longest prefix", b, &Options{Prefix: strings.Repeat("p", MaxKeyLen-1)}, true},
		{"prefix leaving no room", b, &Options{Prefix: strings.Repeat("p", MaxKeyLen)}, false},
		{"prefix with a line feed", b, &Options{Prefix: "a\n/"}, false},
		{"prefix not UTF-8", b, &Options{Prefix: "\xff/"}, false},
	} {
		_, err := New(tc.bucket, tc.opts)
		if tc.ok && err != nil {
			t.Errorf("New(%s) = %v; want nil", tc.desc, err)
		}
		if !tc.ok && !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("New(%s) = %v; want ErrInvalid", tc.desc, err)
		}
	}
}
