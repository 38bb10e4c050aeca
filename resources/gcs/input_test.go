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

func TestValidateName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"dir/file.txt", true},
		{"名前/😀", true},
		{"...", true},
		{"./a", true},
		{strings.Repeat("a", MaxKeyLen), true},
		{strings.Repeat("é", MaxKeyLen/2), true},
		{"", false},
		{strings.Repeat("a", MaxKeyLen+1), false},
		{strings.Repeat("é", MaxKeyLen/2) + "a", false},
		{".", false},
		{"..", false},
		{"a\nb", false},
		{"a\rb", false},
		{"line\r\n", false},
		{"nul\x00", false},
		{"bad\xffutf8", false},
	} {
		err := ValidateName(tc.name)
		if tc.ok && err != nil {
			t.Errorf("ValidateName(%.40q) = %v; want nil", tc.name, err)
		}
		if !tc.ok && !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("ValidateName(%.40q) = %v; want ErrInvalid", tc.name, err)
		}
	}
}

func TestBadInputSendsNothing(t *testing.T) {
	t.Parallel()
	r := newResource(t, offlineBucket(t), nil)
	ctx := t.Context()
	long := strings.Repeat("x", MaxKeyLen+1)
	for _, tc := range []struct {
		desc string
		call func() error
	}{
		{"Put CR LF name", func() error { return r.Put(ctx, "a\r\nb", 1, nil) }},
		{"Put dot name", func() error { return r.Put(ctx, ".", 1, nil) }},
		{"Put long name", func() error { return r.Put(ctx, long, 1, nil) }},
		{"Put token 0", func() error { return r.Put(ctx, "a", 0, nil) }},
		{"Delete dot-dot", func() error { return r.Delete(ctx, "..", 1) }},
		{"Delete token 0", func() error { return r.Delete(ctx, "a", 0) }},
		{"Get long name", func() error { _, _, err := r.Get(ctx, long); return err }},
		{"Highest LF name", func() error { _, err := r.Highest(ctx, "a\n"); return err }},
		{"Open empty name", func() error { _, err := r.Open(ctx, ""); return err }},
		{"Upload reserved metadata", func() error {
			_, err := r.Upload(ctx, "a", 1, nil, &UploadOptions{Metadata: map[string]string{"Fence-Token": "9"}})
			return err
		}},
		{"Upload long write id", func() error {
			_, err := r.Upload(ctx, "a", 1, nil, &UploadOptions{WriteID: strings.Repeat("w", 129)})
			return err
		}},
		{"Upload write id with a newline", func() error {
			_, err := r.Upload(ctx, "a", 1, nil, &UploadOptions{WriteID: "a\nb"})
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
