package torture

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

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
// exports them. The run starts emulators of its own (see the programs'
// variables in emulators.go) and its stores' URLs name their endpoints;
// credentials come from each SDK's usual environment, which the script
// points at the emulators too (AWS_ACCESS_KEY_ID..., STORAGE_EMULATOR_HOST,
// AZURE_STORAGE_CONNECTION_STRING, whose account and key lockers/azblob
// takes for the URL's endpoint).
const (
	EnvDynamoEndpoint = "FENCE_DYNAMO_ENDPOINT"
	EnvS3Endpoint     = "FENCE_S3_ENDPOINT"
	EnvGCSEndpoint    = "FENCE_GCS_ENDPOINT"
)

// envAWSCredentials is where the AWS SDK finds the emulators' keys.
const envAWSCredentials = "AWS_ACCESS_KEY_ID"

// What the backends on emulators need.
var (
	dynamoEnv      = []string{EnvNode, EnvDynaliteJS, envAWSCredentials}
	s3Env          = []string{EnvMinIOBin, envAWSCredentials, envAWSSecret}
	gcsEnv         = []string{EnvFakeGCSBin}
	gcsResourceEnv = []string{EnvFakeGCSBin, resgcs.EnvEmulatorHost}
	azblobEnv      = []string{EnvAzuriteBin, azblob.EnvConnectionString}
)

// minioKeySegment is the longest segment of an object key MinIO takes.
const minioKeySegment = 255

// awsRegion is the region of the emulators' URLs.
const awsRegion = "us-east-1"

// emulatorURL returns the URL scheme://ID-suffix of a store of the run on
// its own emulator of spec, with the parameter endpoint naming it and the
// parameters params (name, value pairs); the variables of env must be set.
func emulatorURL(spec *emulatorSpec, env []string, scheme, suffix string, params ...string) URLs {
	return func(ctx context.Context, s *Stage) (string, string, error) {
		if _, err := need(env...); err != nil {
			return "", "", err
		}
		endpoint, err := s.emulator(ctx, spec)
		if err != nil {
			return "", "", err
		}
		u := storeURL(scheme, s.ID+"-"+suffix, append([]string{"endpoint", endpoint}, params...)...)
		return u, u, nil
	}
}

// dynamoURL returns the URL of a DynamoDB table of the run on its
// dynalite, with the parameters params (name, value pairs).
func dynamoURL(suffix string, params ...string) URLs {
	return emulatorURL(dynaliteSpec, dynamoEnv, "dynamodb", suffix, append([]string{"region", awsRegion}, params...)...)
}

// s3URL returns the URL of a bucket of the run on its MinIO.
func s3URL(suffix string) URLs {
	return emulatorURL(minioSpec, s3Env, "s3", suffix, "region", awsRegion, "path-style", "true",
		"max-key-segment", strconv.Itoa(minioKeySegment))
}

// gcsURL returns the URL of a bucket of the run on its fake-gcs-server,
// with the parameters params (name, value pairs). STORAGE_EMULATOR_HOST
// (which may name another server) tells the SDK to send no credentials;
// the endpoint parameter takes precedence over it.
func gcsURL(suffix string, params ...string) URLs {
	return emulatorURL(fakeGCSSpec, gcsEnv, "gs", suffix, params...)
}

// gcsResourceURL is gcsURL for resources/gcs, which needs
// STORAGE_EMULATOR_HOST to send no credentials.
func gcsResourceURL(suffix string) URLs {
	return emulatorURL(fakeGCSSpec, gcsResourceEnv, "gs", suffix)
}

// azblobURL returns the URL of a container of the run on its Azurite;
// lockers/azblob takes the account and key of
// AZURE_STORAGE_CONNECTION_STRING with the URL's endpoint.
func azblobURL(suffix string) URLs {
	return emulatorURL(azuriteSpec, azblobEnv, "azblob", suffix)
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

// removeAzureContainer deletes the container of an azblob:// URL, on
// its endpoint with the account and key of AZURE_STORAGE_CONNECTION_STRING
// (Azurite's published account, which every Azurite serves).
func removeAzureContainer(ctx context.Context, s *Stage, clean string) error {
	name, q, err := parseStoreURL(clean)
	if err != nil {
		return err
	}
	account, key, ok := connStringAccount(os.Getenv(azblob.EnvConnectionString))
	if !ok {
		return errors.New("the connection string is unusable") // the SDK's error may quote it
	}
	cred, err := container.NewSharedKeyCredential(account, key)
	if err != nil {
		return errors.New("the connection string's key is unusable")
	}
	opts := &container.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: s.CleanHTTPClient()}}
	c, err := container.NewClientWithSharedKeyCredential(q.Get("endpoint")+"/"+name, cred, opts)
	if err != nil {
		return err
	}
	_, err = c.Delete(ctx, nil)
	return err
}

// connStringAccount returns the account name and key of an Azure Storage
// connection string.
func connStringAccount(conn string) (account, key string, ok bool) {
	for _, part := range strings.Split(conn, ";") {
		k, v, _ := strings.Cut(part, "=")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "accountname":
			account = v
		case "accountkey":
			key = v
		}
	}
	return account, key, account != "" && key != ""
}
