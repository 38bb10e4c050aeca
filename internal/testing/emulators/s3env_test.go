package emulators_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

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
	e := &s3Env{t: t, c: c, bucket: emulators.UniqueName("fence-cond-")}
	out, err := c.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(e.bucket)})
	if err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	e.srv = s3Server(out.ResultMetadata)
	t.Cleanup(func() { emulators.RemoveS3Bucket(t, c, e.bucket) })
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

// key returns a new key name.
func (e *s3Env) key() string { return emulators.UniqueName("k-") }

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
	winner, losers := race(e.t, e.srv, func(i int) answer {
		p := &s3.PutObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(key), Body: bytes.NewReader([]byte{byte('a' + i)})}
		cond(p)
		_, err := e.c.PutObject(e.t.Context(), p)
		return s3Answer(err)
	})
	e.expectBody(key, string(rune('a'+winner)), true)
	return losers
}
