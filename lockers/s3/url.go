package s3

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/awsconfig"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterLocker("s3", urlOpener{}) }

// urlOpener opens S3 lockers from URLs of the form of URLForm (see the
// package doc, "Opening from a URL").
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "s3://BUCKET[?region=R&endpoint=URL&path-style=true&prefix=P&max-key-segment=N&backoff=D&" + clockfree.URLForm + "&" + probe.URLForm + "]"
}

// urlConfig is what an s3:// URL says.
type urlConfig struct {
	bucket    string
	region    string
	endpoint  string // without a trailing slash
	pathStyle bool
	prefix    string
	segment   int           // Options.MaxKeySegmentLen
	backoff   time.Duration // Options.Backoff; 0 for DefaultBackoff
	mode      clockfree.Mode
	probe     time.Duration // Options.ProbeInterval
}

// parseURL reads u, an s3:// URL. Every error matches fence.ErrInvalid.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	c := urlConfig{bucket: p.Name("bucket")}
	if c.bucket != "" {
		if why := badBucketName(c.bucket); why != "" {
			p.Fail("bucket name %q %s", c.bucket, why)
		}
	}
	c.region = p.String("region")
	c.endpoint = p.Endpoint()
	c.pathStyle = p.Bool("path-style")
	c.prefix = p.Optional("prefix")
	if ie, ok := checkPrefix(c.prefix).(*fence.InvalidError); ok {
		p.Fail("prefix: %s", ie.Reason)
	}
	if v := p.String("max-key-segment"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxObjectKeyLen {
			p.Fail("max-key-segment=%q is not a number of bytes from 1 to %d", v, MaxObjectKeyLen)
		}
		c.segment = n
	}
	if c.backoff = p.Duration("backoff"); c.backoff > maxBackoff {
		p.Fail("backoff=%v is outside the range 0 to %v", c.backoff, maxBackoff)
	}
	c.mode = clockfree.FromURL(p)
	if ie, ok := c.mode.Check().(*fence.InvalidError); ok {
		p.Fail("max-clock-skew: %s", ie.Reason)
	}
	c.probe = probe.FromURL(p)
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	return c, nil
}

// client builds the S3 client of c from the SDK's default configuration
// (internal/awsconfig), sending its requests through hc when set, as it
// is.
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

// OpenLockerURL implements driver.LockerOpener. It makes a client but
// does not call S3. The Locker's Create makes the bucket.
func (urlOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	client, err := c.client(ctx, urlparam.HTTPClient(opts))
	if err != nil {
		return nil, err
	}
	d, err := newStore(client, c.bucket, &Options{
		Prefix:           c.prefix,
		MaxKeySegmentLen: c.segment,
		Clock:            urlparam.Clock(opts),
		TrustedClock:     c.mode.TrustedClock,
		MaxClockSkew:     c.mode.MaxClockSkew,
		Backoff:          c.backoff,
		ProbeInterval:    c.probe,
	}, nil)
	if err != nil {
		return nil, err
	}
	return driver.NewLocker(d, &driver.LockerOptions{Clock: d.Clock()})
}
