package emulators

import (
	"context"
	"net/http"
	"testing"

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
