package emulators

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence/internal/testing/testenv"
)

// S3Client returns a client of the S3 server at testenv.S3Endpoint
// (MinIO, or versitygw in scripts/test.sh's second run), path-style, in
// region us-east-1, with the server's keys and no retries by the SDK, so
// that a test sees every answer. Its requests go through rt; when rt is
// nil, through an http.Transport of its own whose idle connections are
// closed when the test ends. It reads nothing from the environment or
// profile files. optFns adjust its options last.
func S3Client(t testing.TB, rt http.RoundTripper, optFns ...func(*s3.Options)) *s3.Client {
	t.Helper()
	endpoint := testenv.S3Endpoint(t)
	ak, sk := testenv.S3Credentials(t)
	if rt == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		rt = tr
	}
	opts := s3.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(endpoint),
		UsePathStyle:     true,
		RetryMaxAttempts: 1,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk, Source: "test"}, nil
		}),
		HTTPClient: &http.Client{Transport: rt},
	}
	for _, f := range optFns {
		f(&opts)
	}
	return s3.New(opts)
}

// UniqueName returns prefix followed by 12 random hex digits: a name (of
// a bucket, table or key) no other test uses.
func UniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// S3Bucket creates, through client, a bucket named prefix followed by
// random hex, and removes it with its objects when the test ends.
func S3Bucket(t testing.TB, client *s3.Client, prefix string) string {
	t.Helper()
	name := UniqueName(prefix)
	if _, err := client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("CreateBucket(%q): %v", name, err)
	}
	t.Cleanup(func() { RemoveS3Bucket(t, client, name) })
	return name
}

// RemoveS3Bucket deletes every object of bucket and then the bucket,
// failing the test on error. It runs after the test (t.Context is done by
// then), so it has a context of its own. It lists again after deleting:
// MinIO lists an object "x/child" only once "x" is gone.
func RemoveS3Bucket(t testing.TB, client *s3.Client, bucket string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 5 {
		n, err := deleteObjects(ctx, client, bucket)
		if err != nil {
			t.Errorf("empty bucket %q: %v", bucket, err)
			return
		}
		if n == 0 {
			break
		}
	}
	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Errorf("delete bucket %q: %v", bucket, err)
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
		out, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		if err != nil {
			return n, err
		}
		for _, e := range out.Errors {
			return n, fmt.Errorf("delete %q: %s %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
		}
		n += len(ids)
	}
	return n, nil
}
