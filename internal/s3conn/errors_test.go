package s3conn

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence/internal/testing/emulators"
)

// TestAnswers reads S3's answers (MinIO's, or versitygw's) with StatusOf,
// CodeOf and LostRace, and creates a bucket twice with CreateBucket.
func TestAnswers(t *testing.T) {
	t.Parallel()
	c := emulators.S3Client(t, nil)
	bucket := emulators.UniqueName("fence-s3conn-")
	for range 2 {
		if err := CreateBucket(t.Context(), c, bucket); err != nil {
			t.Fatalf("CreateBucket(%q): %v", bucket, err)
		}
	}
	t.Cleanup(func() { emulators.RemoveS3Bucket(t, c, bucket) })

	_, err := c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("missing")})
	if StatusOf(err) != 404 || CodeOf(err) != "NoSuchKey" || LostRace(err) {
		t.Errorf("GET of a missing key: %d %q, LostRace %v; want 404 NoSuchKey, false", StatusOf(err), CodeOf(err), LostRace(err))
	}
	_, err = c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket + "-missing"), Key: aws.String("k")})
	if StatusOf(err) != 404 || CodeOf(err) != "NoSuchBucket" {
		t.Errorf("GET in a missing bucket: %d %q; want 404 NoSuchBucket", StatusOf(err), CodeOf(err))
	}
	put := func() error {
		_, err := c.PutObject(t.Context(), &s3.PutObjectInput{
			Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("v"), IfNoneMatch: aws.String("*"),
		})
		return err
	}
	if err := put(); err != nil || StatusOf(err) != 0 || CodeOf(err) != "" || LostRace(err) {
		t.Fatalf("first PUT If-None-Match: *: %v", err)
	}
	if err := put(); !LostRace(err) {
		t.Errorf("second PUT If-None-Match: *: %v (%d %q); want LostRace", err, StatusOf(err), CodeOf(err))
	}
}

// TestNoAnswer: an error without S3's answer has status 0 and no code.
func TestNoAnswer(t *testing.T) {
	t.Parallel()
	down := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") })
	c := emulators.S3Client(t, down)
	_, err := c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
	if err == nil || StatusOf(err) != 0 || CodeOf(err) != "" || LostRace(err) {
		t.Errorf("GET through a dead transport: %v (%d %q); want an error with status 0, no code", err, StatusOf(err), CodeOf(err))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := CreateBucket(ctx, c, "b"); err == nil {
		t.Error("CreateBucket with a done context succeeded")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
