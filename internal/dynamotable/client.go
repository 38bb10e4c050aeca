package dynamotable

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fencekit/fence/internal/awsconfig"
)

// Client builds the DynamoDB client of a dynamodb:// URL from the AWS SDK's
// default configuration (credentials, region and endpoint from the usual
// environment), with region and endpoint overriding it where not empty,
// and sending through hc when it is not nil. hc is set on the client, not
// in the configuration: the configuration would try to add AWS_CA_BUNDLE's
// roots to it, which an *http.Client does not allow; a caller's client
// brings its own TLS settings. It does not call DynamoDB.
func Client(ctx context.Context, region, endpoint string, hc *http.Client) (*dynamodb.Client, error) {
	var load []func(*config.LoadOptions) error
	if region != "" {
		load = append(load, config.WithRegion(region))
	}
	cfg, err := awsconfig.Load(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		if hc != nil {
			o.HTTPClient = hc
		}
	}), nil
}
