package s3

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/s3conn"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// The Locker rests on these answers of S3 (AWS's documentation of
// conditional writes, and of conditional reads for the probe). Each is
// checked here against MinIO, the emulator of the tests, so that the
// other tests can trust a 412 and a success:
//
//   - PUT with If-None-Match: * over an existing object: 412.
//   - PUT with If-Match: the current ETag: applied, a new ETag.
//   - PUT with If-Match: an older ETag: 412.
//   - PUT with If-Match on a missing key: 404 NoSuchKey on S3. MinIO
//     once applied such a write (minio/minio#21526); the Locker takes
//     404 and 412 alike (the record changed) and would be unsafe only
//     where the write is applied.
//   - Concurrent conditional PUTs on one ETag: one is applied; S3 answers
//     412 or 409 ConditionalRequestConflict to the others.
//   - HEAD with If-None-Match: the current ETag: 304 Not Modified.
//   - GET of a missing key: 404 NoSuchKey; of a missing bucket: 404
//     NoSuchBucket.
//   - Two writes of different bytes have different ETags (a single-part
//     upload's ETag is the MD5 of its bytes without SSE-KMS or SSE-C,
//     whose ETags are not MD5s: the Locker's write id makes every
//     record's bytes new, whatever the ETag is computed from).
func TestEmulatorHonoursTheWriteConditions(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	c := newClient(t, nil)
	ctx := t.Context()
	put := func(key, body string, ifMatch, ifNoneMatch *string) (string, error) {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body),
			IfMatch: ifMatch, IfNoneMatch: ifNoneMatch,
		}, once)
		if err != nil {
			return "", err
		}
		return aws.ToString(out.ETag), nil
	}
	star := aws.String("*")
	e1, err := put("o", "one", nil, star)
	if err != nil || e1 == "" {
		t.Fatalf("PUT If-None-Match: * of a new object = %q, %v; want applied with an ETag", e1, err)
	}
	if _, err := put("o", "two", nil, star); s3conn.StatusOf(err) != 412 {
		t.Fatalf("PUT If-None-Match: * over an existing object: %v; want 412", err)
	}
	e2, err := put("o", "three", aws.String(e1), nil)
	if err != nil || e2 == e1 {
		t.Fatalf("PUT If-Match the current ETag %s = %q, %v; want applied with a new ETag", e1, e2, err)
	}
	if _, err := put("o", "four", aws.String(e1), nil); s3conn.StatusOf(err) != 412 {
		t.Fatalf("PUT If-Match a stale ETag: %v; want 412", err)
	}
	_, err = put("missing", "five", aws.String(e2), nil)
	t.Logf("PUT If-Match on a missing key answers %d %s", s3conn.StatusOf(err), s3conn.CodeOf(err))
	if err == nil {
		t.Fatalf("PUT If-Match on a missing key was applied (minio/minio#21526); S3 answers 404 NoSuchKey")
	}
	if s := s3conn.StatusOf(err); s != 404 && s != 412 {
		t.Fatalf("PUT If-Match on a missing key: %v; want 404 (S3) or 412", err)
	}
	// The same bytes written again get the same ETag: without a fresh
	// write id in every record, a write conditional on an old ETag could
	// land on a newer version of the same bytes.
	if e3, err := put("o", "one", aws.String(e2), nil); err != nil || e3 != e1 {
		t.Fatalf("the same bytes written again: ETag %s, %v; want the first write's %s (an MD5 of the bytes)", e3, err, e1)
	}

	// HEAD with If-None-Match.
	cur := etagOf(t, bucket, "o")
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("o"), IfNoneMatch: aws.String(cur)}, once)
	if s3conn.StatusOf(err) != 304 {
		t.Fatalf("HEAD If-None-Match the current ETag: %v; want 304 Not Modified", err)
	}
	out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("o"), IfNoneMatch: aws.String(e2)}, once)
	if err != nil || aws.ToString(out.ETag) != cur {
		t.Fatalf("HEAD If-None-Match an older ETag: %v; want 200 with the current ETag", err)
	}

	// GET of a missing key and of a missing bucket.
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("nothing")}, once)
	if s3conn.StatusOf(err) != 404 || s3conn.CodeOf(err) != "NoSuchKey" {
		t.Fatalf("GET of a missing key: %v; want 404 NoSuchKey", err)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(emulators.UniqueName("fence-missing-")), Key: aws.String("k")}, once)
	if s3conn.StatusOf(err) != 404 || s3conn.CodeOf(err) != "NoSuchBucket" {
		t.Fatalf("GET in a missing bucket: %v; want 404 NoSuchBucket", err)
	}

	// Concurrent conditional writes on one ETag: one lands.
	const n = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		won      int
		statuses = map[string]int{}
	)
	cur = etagOf(t, bucket, "o")
	for i := range n {
		wg.Go(func() {
			_, err := put("o", strings.Repeat("x", i+1), aws.String(cur), nil)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won++
				return
			}
			statuses[s3conn.CodeOf(err)]++
		})
	}
	wg.Wait()
	t.Logf("%d concurrent If-Match writes: %d applied, refusals by code %v", n, won, statuses)
	if won != 1 || statuses["PreconditionFailed"]+statuses["ConditionalRequestConflict"] != n-1 {
		t.Fatalf("%d concurrent If-Match writes on one ETag: %d applied, refusals %v; want 1, the others 412 or 409", n, won, statuses)
	}
}

// TestMissingBucket checks that a key in a bucket that does not exist is
// reported as such, never as a free key, and that Create makes it.
func TestMissingBucket(t *testing.T) {
	t.Parallel()
	missing := emulators.UniqueName("fence-missing-")
	l := newLocker(t, missing, nil, nil)
	wantMissing := func(call string, err error) {
		t.Helper()
		if !errors.Is(err, fence.ErrStoreMissing) || !strings.Contains(err.Error(), "NoSuchBucket") {
			t.Errorf("%s in a missing bucket: %v; want an error matching fence.ErrStoreMissing, naming NoSuchBucket", call, err)
		}
	}
	_, err := l.Inspect(t.Context(), "k")
	wantMissing("Inspect", err)
	_, err = l.Acquire(t.Context(), "k", MinTTL, nil)
	wantMissing("Acquire", err)
	wantMissing("Break", l.Break(t.Context(), "k"))
	for range 2 { // creating a bucket one owns is no error
		if err := l.Create(t.Context()); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	t.Cleanup(func() { removeBucket(t, missing) })
	info, err := l.Inspect(t.Context(), "k")
	if err != nil || info.Held || info.Token != 0 {
		t.Errorf("Inspect once the bucket exists: %+v, %v; want a key never acquired", info, err)
	}
	acquire(t, l, "k", MinTTL)
}
