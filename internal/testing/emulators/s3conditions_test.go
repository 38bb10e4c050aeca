package emulators_test

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The conditional requests that resources/s3 and lockers/s3 send, each
// against the answer S3 documents for it:
//
//   - the S3 User Guide, "How to prevent object overwrites with conditional
//     writes" (PutObject If-None-Match: * and If-Match; 412
//     PreconditionFailed; If-Match on a missing key 404 NoSuchKey; a
//     conflicting concurrent write 409 ConditionalRequestConflict),
//   - "Conditional requests" and the GetObject and HeadObject API reference
//     (If-Match 412, If-None-Match 304 Not Modified),
//   - "How to perform conditional deletes" (DeleteObject If-Match on general
//     purpose buckets since September 2025: 412 on another ETag),
//   - "Working with object metadata" (user metadata at most 2 KB, keys and
//     values counted in UTF-8; 400 MetadataTooLarge above),
//   - "Checking object integrity" (the ETag of an object uploaded by one
//     unencrypted or SSE-S3 PutObject is the MD5 of its bytes).
//
// CopyObject is not used by fence and is not probed.

var (
	precondFailed   = answer{http.StatusPreconditionFailed, "PreconditionFailed"}
	noSuchKey       = answer{http.StatusNotFound, "NoSuchKey"}
	notModified     = answer{http.StatusNotModified, "NotModified"}
	condConflict    = answer{http.StatusConflict, "ConditionalRequestConflict"}
	metadataTooLong = answer{http.StatusBadRequest, "MetadataTooLarge"}
)

func TestS3Conditions(t *testing.T) {
	t.Parallel()
	e := newS3Env(t)
	t.Logf("S3 server: %v", e.srv)
	run := func(name string, f func(t *testing.T, e *s3Env)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, &s3Env{t: t, c: e.c, bucket: e.bucket, srv: e.srv})
		})
	}

	run("PutObject If-None-Match * new key", func(t *testing.T, e *s3Env) {
		k := e.key()
		got, _ := e.put(k, "v1", func(p *s3.PutObjectInput) { p.IfNoneMatch = aws.String("*") })
		check(t, e.srv, got, "the object is written", ok)
		e.expectBody(k, "v1", true)
	})
	run("PutObject If-None-Match * existing key", func(t *testing.T, e *s3Env) {
		k := e.key()
		e.mustPut(k, "v1")
		got, _ := e.put(k, "v2", func(p *s3.PutObjectInput) { p.IfNoneMatch = aws.String("*") })
		e.expectBody(k, "v1", true)
		check(t, e.srv, got, "412 PreconditionFailed", precondFailed)
	})
	run("PutObject If-Match current ETag", func(t *testing.T, e *s3Env) {
		k := e.key()
		etag := e.mustPut(k, "v1")
		got, etag2 := e.put(k, "v2", func(p *s3.PutObjectInput) { p.IfMatch = aws.String(etag) })
		check(t, e.srv, got, "the object is replaced", ok)
		e.expectBody(k, "v2", true)
		if got == ok && etag2 == etag {
			t.Errorf("the ETag did not change with the bytes: %s", etag)
		}
	})
	run("PutObject If-Match other ETag", func(t *testing.T, e *s3Env) {
		k := e.key()
		e.mustPut(k, "v1")
		got, _ := e.put(k, "v2", func(p *s3.PutObjectInput) { p.IfMatch = aws.String(wrongETag) })
		e.expectBody(k, "v1", true)
		check(t, e.srv, got, "412 PreconditionFailed", precondFailed)
	})
	run("PutObject If-Match previous ETag", func(t *testing.T, e *s3Env) {
		// The ETag of an overwritten version no longer matches.
		k := e.key()
		old := e.mustPut(k, "v1")
		e.mustPut(k, "v2")
		got, _ := e.put(k, "v3", func(p *s3.PutObjectInput) { p.IfMatch = aws.String(old) })
		e.expectBody(k, "v2", true)
		check(t, e.srv, got, "412 PreconditionFailed", precondFailed)
	})
	run("PutObject If-Match missing key", func(t *testing.T, e *s3Env) {
		// MinIO once created the object here (minio/minio#21526), and
		// versitygw too (versity/versitygw#1709); both now answer 404.
		k := e.key()
		got, _ := e.put(k, "v1", func(p *s3.PutObjectInput) { p.IfMatch = aws.String(wrongETag) })
		if got.status >= 400 {
			e.expectBody(k, "", false)
		}
		check(t, e.srv, got, "404 NoSuchKey", noSuchKey)
	})
	run("PutObject If-Match deleted key", func(t *testing.T, e *s3Env) {
		// The ETag read before a delete must not match after it.
		k := e.key()
		etag := e.mustPut(k, "v1")
		if _, err := e.c.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
		got, _ := e.put(k, "v2", func(p *s3.PutObjectInput) { p.IfMatch = aws.String(etag) })
		if got.status >= 400 {
			e.expectBody(k, "", false)
		}
		check(t, e.srv, got, "404 NoSuchKey", noSuchKey)
	})
	run("HeadObject If-None-Match current ETag", func(t *testing.T, e *s3Env) {
		k := e.key()
		etag := e.mustPut(k, "v1")
		_, err := e.c.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(k), IfNoneMatch: aws.String(etag)})
		check(t, e.srv, s3Answer(err), "304 Not Modified", notModified)
	})
	run("HeadObject If-Match other ETag", func(t *testing.T, e *s3Env) {
		k := e.key()
		e.mustPut(k, "v1")
		_, err := e.c.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(k), IfMatch: aws.String(wrongETag)})
		// A HEAD answer has no body: the SDK names the error by its status.
		got := s3Answer(err)
		if got.status == http.StatusPreconditionFailed {
			got.code = "PreconditionFailed"
		}
		check(t, e.srv, got, "412 Precondition Failed", precondFailed)
	})
	run("GetObject If-None-Match current ETag", func(t *testing.T, e *s3Env) {
		k := e.key()
		etag := e.mustPut(k, "v1")
		_, err := e.c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(k), IfNoneMatch: aws.String(etag)})
		check(t, e.srv, s3Answer(err), "304 Not Modified", notModified)
	})
	run("GetObject If-Match current ETag", func(t *testing.T, e *s3Env) {
		k := e.key()
		etag := e.mustPut(k, "v1")
		out, err := e.c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(k), IfMatch: aws.String(etag)})
		if err == nil {
			out.Body.Close()
		}
		check(t, e.srv, s3Answer(err), "the object", ok)
	})
	run("GetObject If-Match other ETag", func(t *testing.T, e *s3Env) {
		k := e.key()
		e.mustPut(k, "v1")
		out, err := e.c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(k), IfMatch: aws.String(wrongETag)})
		if err == nil {
			out.Body.Close()
		}
		check(t, e.srv, s3Answer(err), "412 PreconditionFailed", precondFailed)
	})
	run("DeleteObject If-Match other ETag", func(t *testing.T, e *s3Env) {
		k := e.key()
		e.mustPut(k, "v1")
		_, err := e.c.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(k), IfMatch: aws.String(wrongETag)})
		got := s3Answer(err)
		if got.status >= 400 {
			e.expectBody(k, "v1", true)
		}
		check(t, e.srv, got, "412 PreconditionFailed (general purpose buckets, since 2025-09)", precondFailed)
	})
	run("DeleteObject If-Match current ETag", func(t *testing.T, e *s3Env) {
		k := e.key()
		etag := e.mustPut(k, "v1")
		_, err := e.c.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(k), IfMatch: aws.String(etag)})
		check(t, e.srv, s3Answer(err), "204, the object deleted", ok)
		e.expectBody(k, "", false)
	})
	run("ETag of equal bytes", func(t *testing.T, e *s3Env) {
		// Equal bytes give equal ETags (the MD5 of the bytes): a record
		// rewritten with the same bytes keeps its ETag, and an If-Match
		// read before would still match. Every write of a lock record
		// or fenced object therefore carries a random id.
		body := "same bytes " + rand.Text()
		sum := md5.Sum([]byte(body))
		want := `"` + hex.EncodeToString(sum[:]) + `"`
		k := e.key()
		first := e.mustPut(k, body)
		again := e.mustPut(k, body)
		other := e.mustPut(e.key(), body)
		got := ok
		if first != want || again != want || other != want {
			got = answer{status: http.StatusOK, code: "with ETags " + first + ", " + again + ", " + other}
		}
		check(t, e.srv, got, "the MD5 of the bytes, "+want, ok)
	})
	run("PutObject user metadata of 2 KB", func(t *testing.T, e *s3Env) {
		got, _ := e.put(e.key(), "v", func(p *s3.PutObjectInput) {
			p.Metadata = map[string]string{"k": strings.Repeat("x", 2047)} // 1 + 2047 bytes
		})
		check(t, e.srv, got, "accepted: 2 KB of keys and values is the limit", ok)
	})
	run("PutObject user metadata over 2 KB", func(t *testing.T, e *s3Env) {
		got, _ := e.put(e.key(), "v", func(p *s3.PutObjectInput) {
			p.Metadata = map[string]string{"k": strings.Repeat("x", 2048)} // 1 + 2048 bytes
		})
		check(t, e.srv, got, "400 MetadataTooLarge", metadataTooLong)
	})
	run("PutObject key below an object", func(t *testing.T, e *s3Env) {
		// S3's key space is flat: "a" and "a/b" are two objects. Lock
		// and fenced object names may be so related.
		k := e.key()
		e.mustPut(k, "parent")
		got, _ := e.put(k+"/child", "child", nil)
		check(t, e.srv, got, "both objects exist (a flat key space)", ok)
		e.expectBody(k, "parent", true)
	})
	run("PutObject key above an object", func(t *testing.T, e *s3Env) {
		k := e.key()
		e.mustPut(k+"/child", "child")
		got, _ := e.put(k, "parent", nil)
		check(t, e.srv, got, "both objects exist (a flat key space)", ok)
		e.expectBody(k+"/child", "child", true)
	})
	run("PutObject If-None-Match * concurrent", func(t *testing.T, e *s3Env) {
		k := e.key()
		losers := e.race(k, func(p *s3.PutObjectInput) { p.IfNoneMatch = aws.String("*") })
		for _, got := range losers {
			check(t, e.srv, got, "one write wins; the others 412 PreconditionFailed or 409 ConditionalRequestConflict", precondFailed, condConflict)
		}
	})
	run("PutObject If-Match concurrent", func(t *testing.T, e *s3Env) {
		k := e.key()
		etag := e.mustPut(k, "v0")
		losers := e.race(k, func(p *s3.PutObjectInput) { p.IfMatch = aws.String(etag) })
		for _, got := range losers {
			check(t, e.srv, got, "one write wins; the others 412 PreconditionFailed or 409 ConditionalRequestConflict", precondFailed, condConflict)
		}
	})
}
