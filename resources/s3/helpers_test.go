package s3

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// newClient returns an S3 client for MinIO whose requests go through rt (a
// transport of its own when nil), with the SDK's retries. optFns adjust
// its options.
func newClient(t testing.TB, rt http.RoundTripper, optFns ...func(*s3.Options)) *s3.Client {
	t.Helper()
	return emulators.S3Client(t, rt, append([]func(*s3.Options){sdkRetries}, optFns...)...)
}

// sdkRetries restores the SDK's default retries, which emulators.S3Client
// turns off.
func sdkRetries(o *s3.Options) { o.RetryMaxAttempts = 0 }

// noRetries turns the SDK's own retries off, so that the package's loop
// sees every failure.
func noRetries(o *s3.Options) { o.RetryMaxAttempts = 1 }

func newTransport(t testing.TB) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// newS3Bucket creates a bucket of a unique name and removes it, with all
// its objects, when the test ends.
func newS3Bucket(t testing.TB, client *s3.Client) string {
	t.Helper()
	return emulators.S3Bucket(t, client, "fence-s3-")
}

// testResource returns a resource on bucket, failing the test on error.
func testResource(t testing.TB, client API, bucket string, opts *Options) *fence.Resource {
	t.Helper()
	b, err := New(client, bucket, opts)
	if err != nil {
		t.Fatalf("New(%q): %v", bucket, err)
	}
	return b
}

// deleteObject is r's Delete with the PutResult of the tombstone's write.
func deleteObject(t testing.TB, r *fence.Resource, key string, token fence.Token) (*PutResult, error) {
	t.Helper()
	b, err := fencedobj.DriverOf[*bucket](r, "s3.New")
	if err != nil {
		t.Fatal(err)
	}
	return b.deleteObject(t.Context(), key, token)
}

// env is one test's MinIO client, bucket and fence Resource.
type env struct {
	client *s3.Client
	bucket string
	b      *fence.Resource
}

// newEnv returns a fresh bucket with a fence Resource on it.
func newEnv(t testing.TB) *env {
	t.Helper()
	c := newClient(t, nil)
	name := newS3Bucket(t, c)
	return &env{client: c, bucket: name, b: testResource(t, c, name, &minioOptions)}
}

// rawPut writes an object with the plain SDK, no fence, no condition.
func (e *env) rawPut(t testing.TB, key string, body []byte, md map[string]string) string {
	t.Helper()
	out, err := e.client.PutObject(t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(e.bucket), Key: aws.String(key), Body: bytes.NewReader(body), Metadata: md,
	})
	if err != nil {
		t.Fatalf("raw PutObject(%q): %v", key, err)
	}
	return aws.ToString(out.ETag)
}

// wantStored checks what the bucket holds under key, read without faults.
func (e *env) wantStored(t *testing.T, key string, value []byte, token fence.Token) {
	t.Helper()
	got, tok, err := e.b.Get(t.Context(), key)
	if err != nil || tok != token || !bytes.Equal(got, value) {
		t.Errorf("Get(%q) = %q, token %d, %v; want %q, token %d", key, got, tok, err, value, token)
	}
}

// raw is an object as the plain SDK reads it.
type raw struct {
	body []byte
	etag string
	md   map[string]string
}

// rawGet reads an object with the plain SDK.
func (e *env) rawGet(t testing.TB, key string) raw {
	t.Helper()
	out, err := e.client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("raw GetObject(%q): %v", key, err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("raw GetObject(%q) body: %v", key, err)
	}
	return raw{body: body, etag: aws.ToString(out.ETag), md: out.Metadata}
}

// errDropped is what faulty returns instead of an answer.
var errDropped = errors.New("fence test: answer dropped")

// fault is what faulty does to one request.
type fault int

const (
	pass    fault = iota
	drop          // forward the request, then lose the answer
	unsent        // fail without forwarding
	respond       // answer with a canned response, without forwarding
)

// rule applies a fault to the next n requests with method whose path
// contains path.
type rule struct {
	method, path string
	n            int
	every        int // when > 1, only every such matching request counts
	seen         int
	fault        fault
	before       func() // run before forwarding, e.g. a competing write
	after        func() // run after forwarding, before the answer is lost
	status       int    // for respond
	code         string // for respond: the S3 error code
}

// faulty is an http.RoundTripper in front of MinIO that injects faults by
// rule and counts requests by method.
type faulty struct {
	next  http.RoundTripper
	mu    sync.Mutex
	rules []*rule
	calls map[string]int
}

func newFaulty(t testing.TB) *faulty {
	return &faulty{next: newTransport(t), calls: map[string]int{}}
}

// add installs r.
func (f *faulty) add(r rule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &r)
}

// count returns the number of requests with method so far.
func (f *faulty) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *faulty) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.calls[r.Method]++
	var hit *rule
	for _, ru := range f.rules {
		if ru.n > 0 && ru.method == r.Method && strings.Contains(r.URL.Path, ru.path) {
			if ru.seen++; ru.every > 1 && ru.seen%ru.every != 0 {
				continue
			}
			ru.n--
			hit = ru
			break
		}
	}
	f.mu.Unlock()
	if hit == nil {
		return f.next.RoundTrip(r)
	}
	if hit.before != nil {
		hit.before()
	}
	switch hit.fault {
	case drop:
		resp, err := f.next.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if hit.after != nil {
			hit.after()
		}
		return nil, errDropped
	case unsent:
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errDropped
	case respond:
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		xml := `<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + hit.code + `</Code><Message>injected by the test</Message></Error>`
		return &http.Response{
			StatusCode:    hit.status,
			Status:        http.StatusText(hit.status),
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			Header:        http.Header{"Content-Type": {"application/xml"}},
			Body:          io.NopCloser(strings.NewReader(xml)),
			ContentLength: int64(len(xml)),
			Request:       r,
		}, nil
	}
	return f.next.RoundTrip(r)
}

// newClientNoEnv returns a client for tests that must fail before sending
// anything: its endpoint is a closed port.
func newClientNoEnv() *s3.Client {
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"), UsePathStyle: true})
}
