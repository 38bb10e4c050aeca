package torture

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strconv"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"google.golang.org/api/option"

	"github.com/fencekit/fence/internal/gcsbucket"
	"github.com/fencekit/fence/lockers/azblob"
	resgcs "github.com/fencekit/fence/resources/gcs"
)

// Environment variables of the emulators, as scripts/emulators.sh
// exports them. The stores' URLs name these endpoints; credentials come
// from each SDK's usual environment, which the script points at the
// emulators too (AWS_ACCESS_KEY_ID..., STORAGE_EMULATOR_HOST,
// AZURE_STORAGE_CONNECTION_STRING).
const (
	EnvDynamoEndpoint = "FENCE_DYNAMO_ENDPOINT"
	EnvS3Endpoint     = "FENCE_S3_ENDPOINT"
	EnvGCSEndpoint    = "FENCE_GCS_ENDPOINT"
)

// envAWSCredentials is where the AWS SDK finds the emulators' keys.
const envAWSCredentials = "AWS_ACCESS_KEY_ID"

// What the backends on emulators need.
var (
	dynamoEnv      = []string{EnvDynamoEndpoint, envAWSCredentials}
	s3Env          = []string{EnvS3Endpoint, envAWSCredentials}
	gcsEnv         = []string{EnvGCSEndpoint}
	gcsResourceEnv = []string{EnvGCSEndpoint, resgcs.EnvEmulatorHost}
)

// minioKeySegment is the longest segment of an object key MinIO takes.
const minioKeySegment = 255

// awsRegion is the region of the emulators' URLs.
const awsRegion = "us-east-1"

// dynamoURL returns the URL of a DynamoDB table of the run on the
// emulator, with the parameters params (name, value pairs).
func dynamoURL(suffix string, params ...string) URLs {
	return oneURL(func(s *Stage) (string, error) {
		v, err := need(EnvDynamoEndpoint)
		if err != nil {
			return "", err
		}
		return storeURL("dynamodb", s.ID+"-"+suffix, append([]string{"region", awsRegion, "endpoint", v[0]}, params...)...), nil
	})
}

// s3URL returns the URL of a bucket of the run on MinIO.
func s3URL(suffix string) URLs {
	return oneURL(func(s *Stage) (string, error) {
		v, err := need(EnvS3Endpoint)
		if err != nil {
			return "", err
		}
		return storeURL("s3", s.ID+"-"+suffix, "region", awsRegion, "endpoint", v[0], "path-style", "true",
			"max-key-segment", strconv.Itoa(minioKeySegment)), nil
	})
}

// gcsURL returns the URL of a bucket of the run on fake-gcs-server, with
// the parameters params (name, value pairs).
func gcsURL(suffix string, params ...string) URLs {
	return oneURL(func(s *Stage) (string, error) {
		v, err := need(EnvGCSEndpoint)
		if err != nil {
			return "", err
		}
		return storeURL("gs", s.ID+"-"+suffix, append([]string{"endpoint", v[0]}, params...)...), nil
	})
}

// awsConfig loads the AWS SDK's configuration from its usual environment,
// in the region of a store URL's parameters q, as the URL openers do.
func awsConfig(ctx context.Context, q url.Values) (aws.Config, error) {
	return config.LoadDefaultConfig(ctx, config.WithRegion(q.Get("region")))
}

// s3Client returns a client of the S3 server of a store URL's parameters
// q, through hc.
func s3Client(ctx context.Context, q url.Values, hc *http.Client) (*s3.Client, error) {
	cfg, err := awsConfig(ctx, q)
	if err != nil {
		return nil, err
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(q.Get("endpoint"))
		o.UsePathStyle = true
		o.HTTPClient = hc
	}), nil
}

// removeDynamoTable deletes the table of a dynamodb:// URL.
func removeDynamoTable(ctx context.Context, s *Stage, clean string) error {
	table, q, err := parseStoreURL(clean)
	if err != nil {
		return err
	}
	cfg, err := awsConfig(ctx, q)
	if err != nil {
		return err
	}
	c := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(q.Get("endpoint"))
		o.HTTPClient = s.CleanHTTPClient()
	})
	_, err = c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	return err
}

// removeS3Bucket empties and deletes the bucket of an s3:// URL.
func removeS3Bucket(ctx context.Context, s *Stage, clean string) error {
	bucket, q, err := parseStoreURL(clean)
	if err != nil {
		return err
	}
	c, err := s3Client(ctx, q, s.CleanHTTPClient())
	if err != nil {
		return err
	}
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		return err
	}
	for _, o := range out.Contents {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
			return err
		}
	}
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	return err
}

// removeGCSBucket empties and deletes the bucket of a gs:// URL.
func removeGCSBucket(ctx context.Context, s *Stage, clean string) error {
	name, q, err := parseStoreURL(clean)
	if err != nil {
		return err
	}
	c, err := storage.NewClient(ctx, option.WithEndpoint(q.Get("endpoint")+"/storage/v1/"), option.WithHTTPClient(s.CleanHTTPClient()))
	if err != nil {
		return err
	}
	defer c.Close()
	return gcsbucket.Remove(ctx, c.Bucket(name))
}

// removeAzureContainer deletes the container of an azblob:// URL, on the
// account of AZURE_STORAGE_CONNECTION_STRING.
func removeAzureContainer(ctx context.Context, s *Stage, clean string) error {
	name, _, err := parseStoreURL(clean)
	if err != nil {
		return err
	}
	opts := &container.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: s.CleanHTTPClient()}}
	c, err := container.NewClientFromConnectionString(os.Getenv(azblob.EnvConnectionString), name, opts)
	if err != nil {
		return errors.New("the connection string is unusable") // the SDK's error may quote it
	}
	_, err = c.Delete(ctx, nil)
	return err
}
