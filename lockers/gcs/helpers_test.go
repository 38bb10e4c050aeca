package gcs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/gcsbucket"
	"github.com/fencekit/fence/internal/objlock/objlocktest"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// newClient returns a client of the emulator whose requests go through
// rt (http.DefaultTransport when nil). It is closed when the test ends.
func newClient(t testing.TB, rt http.RoundTripper) *storage.Client {
	t.Helper()
	endpoint := testenv.GCSEndpoint(t)
	if rt == nil {
		rt = http.DefaultTransport
	}
	c, err := storage.NewClient(context.Background(),
		option.WithEndpoint(strings.TrimSuffix(endpoint, "/")+"/storage/v1/"),
		option.WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		t.Fatalf("storage.NewClient: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newBucket creates a bucket of a unique name on the emulator through a
// client of its own; the bucket and its objects are removed when the
// test ends.
func newBucket(t testing.TB) string {
	t.Helper()
	c := newClient(t, nil)
	name := "fence-test-" + strings.ToLower(rand.Text()[:16])
	b := c.Bucket(name)
	if err := CreateBucket(t.Context(), b, "fence-test"); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	t.Cleanup(func() { removeBucket(t, b) })
	return name
}

// removeBucket deletes bucket b and its objects.
func removeBucket(t testing.TB, b *storage.BucketHandle) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gcsbucket.Remove(ctx, b); err != nil {
		t.Logf("removing bucket %s: %v", b.BucketName(), err)
	}
}

// testLocker is a Locker with the store under it, for the tests that
// look at the store's objects or what it remembers.
type testLocker struct {
	*fence.Locker
	d *store
}

// object returns the name of the object that holds key's record.
func (l *testLocker) object(key string) string { return l.d.prefix + key }

// newLocker returns a Locker on bucket through rt (nil: directly), as New
// makes it.
func newLocker(t testing.TB, bucket string, rt http.RoundTripper, opts *Options) *testLocker {
	t.Helper()
	return newSeenLocker(t, newClient(t, rt).Bucket(bucket), opts, nil)
}

// newSeenLocker returns a Locker on bucket whose store remembers what it
// sees in obs, which Lockers of one process share (nil: observations of
// its own).
func newSeenLocker(t testing.TB, bucket *storage.BucketHandle, opts *Options, obs *clockfree.Observations) *testLocker {
	t.Helper()
	d, err := newStore(bucket, opts, obs)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	l, err := driver.NewLocker(d, &driver.LockerOptions{Clock: d.Clock()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &testLocker{Locker: l, d: d}
}

// storeOf returns the store under l, a Locker opened from a URL.
func storeOf(t testing.TB, l *fence.Locker) *store {
	t.Helper()
	d, ok := driver.LockerOf(l).(*store)
	if !ok {
		t.Fatalf("the Locker's driver is a %T, not a *store", driver.LockerOf(l))
	}
	return d
}

// writeRaw writes data as object name of bucket, unconditionally, as an
// operator (or a bug) would.
func writeRaw(t *testing.T, bucket, name string, data []byte) int64 {
	t.Helper()
	w := newClient(t, nil).Bucket(bucket).Object(name).NewWriter(t.Context())
	w.ChunkSize = 0
	if _, err := w.Write(data); err != nil {
		t.Fatalf("writing %q: %v", name, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("writing %q: %v", name, err)
	}
	return w.Attrs().Generation
}

// generation returns the generation of object name of bucket, 0 if absent.
func generation(t *testing.T, bucket, name string) int64 {
	t.Helper()
	attrs, err := newClient(t, nil).Bucket(bucket).Object(name).Attrs(t.Context())
	if errors.Is(err, storage.ErrObjectNotExist) {
		return 0
	}
	if err != nil {
		t.Fatalf("Attrs(%q): %v", name, err)
	}
	return attrs.Generation
}

// counter counts the requests that pass through it, by kind.
type counter struct {
	next          http.RoundTripper
	reads, writes atomic.Int64
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	if isUpload(req) {
		c.writes.Add(1)
	} else {
		c.reads.Add(1)
	}
	return c.next.RoundTrip(req)
}

func (c *counter) total() int64 { return c.reads.Load() + c.writes.Load() }

// isUpload reports whether req writes an object.
func isUpload(req *http.Request) bool {
	return req.Method == http.MethodPost && strings.Contains(req.URL.Path, "/upload/")
}

// errorResponse returns an answer of Cloud Storage's JSON API with code
// (its JSON errors carry no error code: errCode is not sent).
func errorResponse(req *http.Request, code int, _, msg string) *http.Response {
	body := fmt.Sprintf(`{"error":{"code":%d,"message":%q}}`, code, msg)
	return &http.Response{
		StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: nopCloser{strings.NewReader(body)},
		ContentLength: int64(len(body)), Request: req,
	}
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

// acquire and inspect take and describe a key and fail the test on
// error.
var (
	acquire = objlocktest.Acquire
	inspect = objlocktest.Inspect
)
