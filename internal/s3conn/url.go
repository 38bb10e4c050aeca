package s3conn

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/awsconfig"
	"github.com/fencekit/fence/internal/urlparam"
)

// Config is what an s3:// URL says about where the bucket is.
type Config struct {
	Bucket    string
	Region    string // "" for the environment's
	Endpoint  string // without a trailing slash; "" for AWS's
	PathStyle bool
}

// Parse reads the bucket (the URL's host) and the region, endpoint and
// path-style parameters through p, which the caller made with
// urlparam.New on the URL. Problems are recorded in p, so the caller
// reads its own parameters and reports every problem with p.Done.
func Parse(p *urlparam.Params) Config {
	return Config{
		Bucket:    p.Name("bucket"),
		Region:    p.String("region"),
		Endpoint:  p.Endpoint(),
		PathStyle: p.Bool("path-style"),
	}
}

// MaxKeySegment reads the max-key-segment parameter through p: a number
// of bytes from 1 to max, or 0 when the URL has none.
func MaxKeySegment(p *urlparam.Params, max int) int {
	v := p.String("max-key-segment")
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		p.Fail("max-key-segment=%q is not a number of bytes from 1 to %d", v, max)
	}
	return n
}

// Client builds the S3 client of c from the SDK's default configuration
// (internal/awsconfig), sending its requests through hc when set, as it
// is (the SDK would otherwise change its transport, for AWS_CA_BUNDLE).
// A configuration error is a *fence.OpError of backend, op "open".
func (c Config) Client(ctx context.Context, backend string, hc *http.Client) (*s3.Client, error) {
	var load []func(*config.LoadOptions) error
	if c.Region != "" {
		load = append(load, config.WithRegion(c.Region))
	}
	cfg, err := awsconfig.Load(ctx, load...)
	if err != nil {
		return nil, &fence.OpError{Backend: backend, Op: "open", Err: fmt.Errorf("AWS configuration: %w", err)}
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		if c.PathStyle {
			o.UsePathStyle = true
		}
		if hc != nil {
			o.HTTPClient = hc
		}
	}), nil
}
