// Package awsconfig loads the AWS SDK configuration of the clients that
// fence's URL openers make (dynamodb:// lockers and resources, s3://
// resources), so that they all behave alike:
//
//   - They log nothing: the SDK's default logger writes its warnings on
//     standard error (the instance metadata service's among them, when it
//     looks for credentials there), and fence reports a store's errors
//     through the calls that met them.
//   - Their retries have no client-side rate limit. The SDK's standard
//     retryer spends a token bucket on retries and, once a store has
//     failed for a while, fails calls at once with "failed to get rate
//     limit token, retry quota exceeded" in place of the store's own
//     error: an outage would then read as a client fault. The retryer is
//     otherwise the standard one (3 attempts, AWS_MAX_ATTEMPTS honoured
//     by the service clients), and every call still ends with its context.
package awsconfig

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"
)

// Load returns the SDK's default configuration (credentials, region and
// endpoints from the usual environment) with load applied, a logger that
// discards everything and a retryer without a rate limit.
func Load(ctx context.Context, load ...func(*config.LoadOptions) error) (aws.Config, error) {
	load = append(load,
		config.WithLogger(logging.Nop{}),
		config.WithClientLogMode(0),
		config.WithRetryer(Retryer),
	)
	return config.LoadDefaultConfig(ctx, load...)
}

// Retryer returns the standard retryer without its client-side rate
// limiter.
func Retryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) { o.RateLimiter = ratelimit.None })
}
