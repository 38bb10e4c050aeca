package emulators_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/fencekit/fence/internal/testing/emulators"
)

// The helpers of TestS3Conditions: a bucket of its own, and calls of the
// AWS SDK that return the answer, or fail the test where a probe needs
// the call to succeed.

// s3Answer is the answer a call of the SDK returned with err; status 0
// when no answer came.
func s3Answer(err error) answer {
	if err == nil {
		return ok
	}
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) {
		return answer{code: "no answer: " + err.Error()}
	}
	a := answer{status: re.HTTPStatusCode()}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		a.code = ae.ErrorCode()
	}
	if a.status == http.StatusNotModified {
		a.code = "NotModified" // a 304 has no body; the SDK names it by its status text
	}
	return a
}

// s3Env is one bucket of the S3 server under test.
type s3Env struct {
	t      *testing.T
	c      *s3.Client
	bucket string
	srv    server
}

// newS3Env creates a bucket, removed with its objects when the test ends.
func newS3Env(t *testing.T) *s3Env {
	t.Helper()
	c := emulators.S3Client(t, nil)
	e := &s3Env{t: t, c: c, bucket: "fence-cond-" + strings.ToLower(rand.Text()[:12])}
	out, err := c.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(e.bucket)})
	if err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	e.srv = s3Server(out.ResultMetadata)
	t.Cleanup(e.empty)
	return e
}

// s3Server names the S3 server from FENCE_S3_SERVER ("name version", as
// scripts/emulators.sh exports it) or else from the Server header of a
// response.
func s3Server(meta middleware.Metadata) server {
	if v := os.Getenv("FENCE_S3_SERVER"); v != "" {
		name, version, _ := strings.Cut(v, " ")
		return server{name: strings.ToLower(name), version: version}
	}
	name := "unknown S3 server"
	if r, _ := awsmiddleware.GetRawResponse(meta).(*smithyhttp.Response); r != nil && r.Header.Get("Server") != "" {
		name = strings.ToLower(strings.Fields(r.Header.Get("Server"))[0])
	}
	return server{name: name}
}

// empty deletes the bucket's objects and the bucket.
func (e *s3Env) empty() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // t.Context is done
	defer cancel()
	out, err := e.c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(e.bucket)})
	if err != nil {
		e.t.Logf("list %s: %v", e.bucket, err)
		return
	}
	for _, o := range out.Contents {
		_, _ = e.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(e.bucket), Key: o.Key})
	}
	if _, err := e.c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(e.bucket)}); err != nil {
		e.t.Logf("delete bucket %s: %v", e.bucket, err)
	}
}

// key returns a new key name.
func (e *s3Env) key() string { return "k-" + strings.ToLower(rand.Text()[:12]) }

// put writes body to key with the given conditions and returns the answer
// and the new ETag.
func (e *s3Env) put(key, body string, in func(*s3.PutObjectInput)) (answer, string) {
	e.t.Helper()
	p := &s3.PutObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(key), Body: strings.NewReader(body)}
	if in != nil {
		in(p)
	}
	out, err := e.c.PutObject(e.t.Context(), p)
	if err != nil {
		return s3Answer(err), ""
	}
	return ok, aws.ToString(out.ETag)
}

// mustPut writes body to key unconditionally and returns its ETag.
func (e *s3Env) mustPut(key, body string) string {
	e.t.Helper()
	a, etag := e.put(key, body, nil)
	if a != ok {
		e.t.Fatalf("PutObject %s: %v", key, a)
	}
	return etag
}

// body returns key's content, or "" and false when it is missing.
func (e *s3Env) body(key string) (string, bool) {
	e.t.Helper()
	out, err := e.c.GetObject(e.t.Context(), &s3.GetObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(key)})
	if err != nil {
		if a := s3Answer(err); a.status == http.StatusNotFound {
			return "", false
		}
		e.t.Fatalf("GetObject %s: %v", key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		e.t.Fatalf("GetObject %s: %v", key, err)
	}
	return string(b), true
}

// expectBody fails the test unless key holds want (missing when want is
// "" and exists false): a refused write must have changed nothing.
func (e *s3Env) expectBody(key, want string, exists bool) {
	e.t.Helper()
	got, ok := e.body(key)
	switch {
	case ok != exists:
		e.t.Errorf("after the request %s exists = %v, want %v: the server applied a write it refused, or lost one", key, ok, exists)
	case got != want:
		e.t.Errorf("after the request %s holds %q, want %q", key, got, want)
	}
}

// wrongETag is a well-formed ETag that no object here has.
const wrongETag = `"00000000000000000000000000000000"`

// race sends 8 conditional PUTs of different bodies to key at once, checks
// that exactly one was applied and that the object holds its body, and
// returns the answers of the others.
func (e *s3Env) race(key string, cond func(*s3.PutObjectInput)) []answer {
	e.t.Helper()
	const n = 8
	var (
		wg      sync.WaitGroup
		answers [n]answer
		start   = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			p := &s3.PutObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(key), Body: bytes.NewReader([]byte{byte('a' + i)})}
			cond(p)
			_, err := e.c.PutObject(e.t.Context(), p)
			answers[i] = s3Answer(err)
		})
	}
	close(start)
	wg.Wait()
	var winners []int
	var losers []answer
	for i, a := range answers {
		if a == ok {
			winners = append(winners, i)
		} else {
			losers = append(losers, a)
		}
	}
	if len(winners) != 1 {
		e.t.Fatalf("%v: %d of %d conditional PUTs succeeded (%v), want exactly 1", e.srv, len(winners), n, answers)
	}
	e.expectBody(key, string(rune('a'+winners[0])), true)
	return losers
}
