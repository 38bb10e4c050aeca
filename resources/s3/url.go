package s3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/awsconfig"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterResource("s3", urlOpener{}) }

// urlOpener opens resources from s3:// URLs (see the package doc).
type urlOpener struct{}

// URLForm implements driver.ResourceOpener.
func (urlOpener) URLForm() string {
	return "s3://BUCKET[?region=R&endpoint=URL&path-style=true&prefix=P&max-key-segment=N]"
}

// urlConfig is what an s3:// URL says.
type urlConfig struct {
	bucket, region, endpoint string
	pathStyle                bool
	opts                     Options // Prefix and MaxKeySegmentLen
}

// parseURL reads an s3:// URL. Every error matches fence.ErrInvalid.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	var c urlConfig
	c.bucket = p.Name("bucket")
	c.region = p.String("region")
	c.endpoint = p.Endpoint()
	c.pathStyle = p.Bool("path-style")
	c.opts.Prefix = p.Optional("prefix")
	if v := p.String("max-key-segment"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxKeyLen {
			p.Fail("max-key-segment=%q is not a number of bytes from 1 to %d", v, MaxKeyLen)
		}
		c.opts.MaxKeySegmentLen = n
	}
	return c, p.Done()
}

// OpenResourceURL implements driver.ResourceOpener.
func (urlOpener) OpenResourceURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Resource, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	client, err := c.client(ctx, urlparam.HTTPClient(opts))
	if err != nil {
		return nil, err
	}
	return newResource(client, c.bucket, &c.opts, &driver.ResourceOptions{
		Create: func(ctx context.Context) error { return c.createBucket(ctx, client) },
	})
}

// client builds the S3 client of c from the SDK's default configuration,
// sending its requests through hc when set, as it is (the SDK would
// otherwise change its transport, for AWS_CA_BUNDLE).
func (c urlConfig) client(ctx context.Context, hc *http.Client) (*s3.Client, error) {
	var load []func(*config.LoadOptions) error
	if c.region != "" {
		load = append(load, config.WithRegion(c.region))
	}
	cfg, err := awsconfig.Load(ctx, load...)
	if err != nil {
		return nil, &fence.OpError{Backend: backendName, Op: "open", Err: fmt.Errorf("AWS configuration: %w", err)}
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if c.endpoint != "" {
			o.BaseEndpoint = aws.String(c.endpoint)
		}
		if c.pathStyle {
			o.UsePathStyle = true
		}
		if hc != nil {
			o.HTTPClient = hc
		}
	}), nil
}

// createBucket creates the bucket in the client's region; one you own
// already is not an error. Its errors are bare, as a driver's: the
// *fence.Resource's Create wraps them.
func (c urlConfig) createBucket(ctx context.Context, client *s3.Client) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(c.bucket)}
	// us-east-1 is the default location and may not be named.
	if region := client.Options().Region; region != "" && region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(region)}
	}
	_, err := client.CreateBucket(ctx, in)
	if _, mine := errors.AsType[*types.BucketAlreadyOwnedByYou](err); mine {
		return nil
	}
	return err
}
