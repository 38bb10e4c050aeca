package torture

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence/lockers/azblob"
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
	gcsResourceEnv = []string{EnvFakeGCSBin, "STORAGE_EMULATOR_HOST"}
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

// s3LockerURL returns the URL of the S3 locker on a bucket of the run on
// its MinIO (the bucket of s3URL(suffix)), with the parameters params
// (name, value pairs).
func s3LockerURL(suffix string, params ...string) URLs {
	return emulatorURL(minioSpec, s3Env, "s3", suffix, append([]string{"region", awsRegion, "path-style", "true",
		"max-key-segment", strconv.Itoa(minioKeySegment)}, params...)...)
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
