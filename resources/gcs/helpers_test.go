package gcs

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// newClient returns a storage client for the emulator whose requests go
// through rt (a fresh http.Transport when nil). It is configured
// explicitly, not through STORAGE_EMULATOR_HOST: the JSON API endpoint,
// no credentials, and JSON reads (the XML read path needs the emulator's
// -public-host to match).
func newClient(t testing.TB, rt http.RoundTripper) *storage.Client {
	t.Helper()
	endpoint := testenv.GCSEndpoint(t)
	if rt == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		rt = tr
	}
	c, err := storage.NewClient(t.Context(),
		option.WithEndpoint(endpoint+"/storage/v1/"),
		option.WithHTTPClient(&http.Client{Transport: rt}),
		storage.WithJSONReads())
	if err != nil {
		t.Fatalf("storage.NewClient: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newBucket creates a bucket of a unique name on the emulator and returns
// its handle on client.
func newBucket(t testing.TB, client *storage.Client) *storage.BucketHandle {
	t.Helper()
	name := uniqueName("fence-test-")
	bh := client.Bucket(name)
	if err := bh.Create(t.Context(), "fence-test", nil); err != nil {
		t.Fatalf("creating bucket %q: %v", name, err)
	}
	return bh
}

// uniqueName returns prefix followed by random hex.
func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// fastOptions keep the backoff short so that tests of retries are quick.
var fastOptions = &Options{ConflictBackoff: time.Millisecond, RateLimitBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}

// bucketIn returns the driver under r, a resource of New.
func bucketIn(t testing.TB, r *fence.Resource) *bucket {
	t.Helper()
	b, err := bucketOf(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testResource returns a resource on bucket, failing the test on an error.
func testResource(t testing.TB, bucket *storage.BucketHandle, opts *Options) *fence.Resource {
	t.Helper()
	r, err := New(bucket, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}
