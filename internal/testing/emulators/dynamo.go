// Package emulators builds SDK clients of the storage emulators that
// scripts/emulators.sh starts, for tests. It finds them through
// internal/testenv, so a test using it fails under scripts/test.sh and is
// skipped otherwise when the emulator is not running.
package emulators

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence/internal/testing/testenv"
)

// DynamoClient returns a DynamoDB client of dynalite whose requests go
// through rt; when rt is nil, through an http.Transport of its own whose
// idle connections are closed when the test ends. The client has region
// us-east-1 and fixed test credentials (dynalite checks none) and reads
// nothing from the environment or profile files. optFns adjust its
// options last.
func DynamoClient(t testing.TB, rt http.RoundTripper, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	endpoint := testenv.DynamoEndpoint(t)
	if rt == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		rt = tr
	}
	opts := dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "fence-test", SecretAccessKey: "fence-test-secret", Source: "test"}, nil
		}),
		HTTPClient: &http.Client{Transport: rt},
	}
	for _, f := range optFns {
		f(&opts)
	}
	return dynamodb.New(opts)
}
