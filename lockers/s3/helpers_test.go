package s3

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/objlock/objlocktest"
	"github.com/fencekit/fence/internal/s3conn"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// minioSegment is the longest segment of an object key between slashes
// that MinIO accepts; the tests' Lockers set it as MaxKeySegmentLen.
const minioSegment = 255

// newClient returns a client of MinIO whose requests go through rt (a
// transport of its own when nil), with the SDK's defaults otherwise:
// the Locker must turn its retries off itself.
func newClient(t testing.TB, rt http.RoundTripper) *s3.Client {
	t.Helper()
	endpoint := testenv.S3Endpoint(t)
	ak, sk := testenv.S3Credentials(t)
	if rt == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		rt = tr
	}
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk, Source: "test"}, nil
		}),
		HTTPClient: &http.Client{Transport: rt},
	})
}

// uniqueBucket returns a bucket name no test used.
func uniqueBucket(prefix string) string {
	return prefix + strings.ToLower(rand.Text()[:16])
}

// newBucket creates a bucket of a unique name on MinIO through the
// Locker's Create; the bucket and its objects are removed when the test
// ends.
func newBucket(t testing.TB) string {
	t.Helper()
	name := uniqueBucket("fence-s3lock-")
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

// removeBucket deletes bucket and its objects (after the test:
// t.Context is done by then). It lists again after deleting: MinIO
// lists an object "x/child" only once "x" is gone.
func removeBucket(t testing.TB, bucket string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := newClient(t, nil)
	for range 5 {
		n, err := deleteObjects(ctx, client, bucket)
		if err != nil {
			t.Logf("empty bucket %q: %v", bucket, err)
			return
		}
		if n == 0 {
			break
		}
	}
	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Logf("delete bucket %q: %v", bucket, err)
	}
}

// deleteObjects deletes the objects bucket lists and returns how many.
func deleteObjects(ctx context.Context, client *s3.Client, bucket string) (int, error) {
	n := 0
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return n, err
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, 0, len(page.Contents))
		for _, o := range page.Contents {
			ids = append(ids, types.ObjectIdentifier{Key: o.Key})
		}
		if _, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}}); err != nil {
			return n, err
		}
		n += len(ids)
	}
	return n, nil
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

// fakeOptions returns options with a fake clock and fast retries.
func fakeOptions(clock *clocktest.Fake) *Options {
	return &Options{Clock: clock, Backoff: time.Millisecond}
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
