package torture

import (
	"context"
	"net/http"
	"os"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"google.golang.org/api/option"
)

// Environment variables of the emulators, as scripts/emulators.sh
// exports them.
const (
	EnvDynamoEndpoint = "FENCE_DYNAMO_ENDPOINT"
	EnvS3Endpoint     = "FENCE_S3_ENDPOINT"
	EnvS3AccessKey    = "FENCE_S3_ACCESS_KEY"
	EnvS3SecretKey    = "FENCE_S3_SECRET_KEY"
	EnvGCSEndpoint    = "FENCE_GCS_ENDPOINT"
	EnvAzuriteURL     = "FENCE_AZURITE_BLOB_URL"
	EnvAzuriteAccount = "FENCE_AZURITE_ACCOUNT"
	EnvAzuriteKey     = "FENCE_AZURITE_KEY"
)

func staticCredentials(access, secret string) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: access, SecretAccessKey: secret, Source: "fence torture"}, nil
	})
}

// dynamoClient returns a DynamoDB client of the emulator through hc.
func dynamoClient(hc *http.Client) (*dynamodb.Client, error) {
	v, err := need(EnvDynamoEndpoint)
	if err != nil {
		return nil, err
	}
	access, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if access == "" {
		access, secret = "fence", "fence"
	}
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(v[0]),
		Credentials:  staticCredentials(access, secret),
		HTTPClient:   hc,
	}), nil
}

// s3Client returns an S3 client of MinIO through hc.
func s3Client(hc *http.Client) (*s3.Client, error) {
	v, err := need(EnvS3Endpoint, EnvS3AccessKey, EnvS3SecretKey)
	if err != nil {
		return nil, err
	}
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(v[0]),
		UsePathStyle: true,
		Credentials:  staticCredentials(v[1], v[2]),
		HTTPClient:   hc,
	}), nil
}

// gcsClient returns a Cloud Storage client of fake-gcs-server through hc,
// closed when the run ends.
func gcsClient(ctx context.Context, s *Stage, hc *http.Client) (*storage.Client, error) {
	v, err := need(EnvGCSEndpoint)
	if err != nil {
		return nil, err
	}
	c, err := storage.NewClient(ctx, option.WithEndpoint(strings.TrimSuffix(v[0], "/")+"/storage/v1/"), option.WithHTTPClient(hc))
	if err != nil {
		return nil, err
	}
	s.Defer(func() { _ = c.Close() })
	return c, nil
}

// gcsBucket creates a bucket named for the run through a clean client and
// returns its name; it is emptied and removed when the run ends.
func gcsBucket(ctx context.Context, s *Stage, suffix string) (string, error) {
	c, err := gcsClient(ctx, s, s.CleanHTTPClient())
	if err != nil {
		return "", err
	}
	name := s.ID + "-" + suffix
	b := c.Bucket(name)
	if err := b.Create(ctx, "fence-torture", nil); err != nil {
		return "", err
	}
	s.Defer(func() {
		ctx, cancel := cleanupContext()
		defer cancel()
		it := b.Objects(ctx, nil)
		for {
			attrs, err := it.Next()
			if err != nil {
				break
			}
			_ = b.Object(attrs.Name).Delete(ctx)
		}
		_ = b.Delete(ctx)
	})
	return name, nil
}

// azureContainer returns a client of the container name on Azurite
// through hc, with few, quick SDK retries.
func azureContainer(name string, hc *http.Client) (*container.Client, error) {
	v, err := need(EnvAzuriteURL, EnvAzuriteAccount, EnvAzuriteKey)
	if err != nil {
		return nil, err
	}
	cred, err := container.NewSharedKeyCredential(v[1], v[2])
	if err != nil {
		return nil, err
	}
	opts := &container.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: hc,
		Retry:     policy.RetryOptions{MaxRetries: 2, RetryDelay: 50 * time.Millisecond, MaxRetryDelay: 500 * time.Millisecond},
	}}
	return container.NewClientWithSharedKeyCredential(strings.TrimSuffix(v[0], "/")+"/"+name, cred, opts)
}
