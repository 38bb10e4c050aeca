package s3

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/objlock/objlocktest"
	"github.com/fencekit/fence/internal/s3conn"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// minioSegment is the longest segment of an object key between slashes
// that MinIO accepts; the tests' Lockers set it as MaxKeySegmentLen.
const minioSegment = 255

// newClient returns a client of MinIO whose requests go through rt (a
// transport of its own when nil), with the SDK's retries: the Locker must
// turn them off itself.
func newClient(t testing.TB, rt http.RoundTripper) *s3.Client {
	t.Helper()
	return emulators.S3Client(t, rt, sdkRetries)
}

// sdkRetries restores the SDK's default retries, which emulators.S3Client
// turns off.
func sdkRetries(o *s3.Options) { o.RetryMaxAttempts = 0 }

// newBucket creates a bucket of a unique name on MinIO through the
// Locker's Create; the bucket and its objects are removed when the test
// ends.
func newBucket(t testing.TB) string {
	t.Helper()
	name := emulators.UniqueName("fence-s3lock-")
	l, err := New(newClient(t, nil), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { removeBucket(t, name) })
	return name
}

// removeBucket deletes bucket and its objects.
func removeBucket(t testing.TB, bucket string) {
	emulators.RemoveS3Bucket(t, newClient(t, nil), bucket)
}

// testLocker is a Locker with the store under it, for the tests that
// look at the store's objects or what it remembers.
type testLocker struct {
	*fence.Locker
	d *store
}

// object returns the key of the object that holds key's record.
func (l *testLocker) object(key string) string { return l.d.prefix + key }

// newLocker returns a Locker on bucket through rt (nil: directly), as New
// makes it, with MinIO's segment limit unless opts sets one.
func newLocker(t testing.TB, bucket string, rt http.RoundTripper, opts *Options) *testLocker {
	t.Helper()
	return newSeenLocker(t, newClient(t, rt), bucket, opts, nil)
}

// newSeenLocker returns a Locker on bucket whose store remembers what it
// sees in obs, which Lockers of one process share (nil: observations of
// its own).
func newSeenLocker(t testing.TB, client *s3.Client, bucket string, opts *Options, obs *clockfree.Observations) *testLocker {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxKeySegmentLen == 0 {
		o.MaxKeySegmentLen = minioSegment
	}
	d, err := newStore(client, bucket, &o, obs)
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
// operator (or a bug) would, and returns its ETag.
func writeRaw(t *testing.T, bucket, name string, data []byte) string {
	t.Helper()
	out, err := newClient(t, nil).PutObject(t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(name), Body: strings.NewReader(string(data)),
	})
	if err != nil {
		t.Fatalf("writing %q: %v", name, err)
	}
	return aws.ToString(out.ETag)
}

// etagOf returns the ETag of object name of bucket, "" if absent.
func etagOf(t *testing.T, bucket, name string) string {
	t.Helper()
	out, err := newClient(t, nil).HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(name)})
	if s3conn.StatusOf(err) == 404 {
		return ""
	}
	if err != nil {
		t.Fatalf("HeadObject(%q): %v", name, err)
	}
	return aws.ToString(out.ETag)
}

// readRaw returns the content of object name of bucket.
func readRaw(t *testing.T, bucket, name string) []byte {
	t.Helper()
	out, err := newClient(t, nil).GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(name)})
	if err != nil {
		t.Fatalf("GetObject(%q): %v", name, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// counter counts the requests that pass through it, by method: GET
// reads a record, PUT writes one, HEAD probes.
type counter struct {
	next               http.RoundTripper
	gets, puts, others atomic.Int64
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet:
		c.gets.Add(1)
	case http.MethodPut:
		c.puts.Add(1)
	default:
		c.others.Add(1)
	}
	return c.next.RoundTrip(req)
}

func (c *counter) total() int64 { return c.gets.Load() + c.puts.Load() + c.others.Load() }

// errorResponse returns an S3 error answer with status and code.
func errorResponse(req *http.Request, status int, code, msg string) *http.Response {
	body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, msg)
	return &http.Response{
		StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/xml"}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req,
	}
}

// acquire and inspect take and describe a key and fail the test on
// error.
var (
	acquire = objlocktest.Acquire
	inspect = objlocktest.Inspect
)
