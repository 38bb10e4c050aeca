package s3

import (
	"context"
	"net/url"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/s3conn"
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
	conn s3conn.Config
	opts Options // Prefix and MaxKeySegmentLen
}

// parseURL reads an s3:// URL. Every error matches fence.ErrInvalid.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	c := urlConfig{conn: s3conn.Parse(p)}
	c.opts.Prefix = p.Optional("prefix")
	c.opts.MaxKeySegmentLen = s3conn.MaxKeySegment(p, MaxKeyLen)
	return c, p.Done()
}

// OpenResourceURL implements driver.ResourceOpener.
func (urlOpener) OpenResourceURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Resource, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	client, err := c.conn.Client(ctx, backendName, urlparam.HTTPClient(opts))
	if err != nil {
		return nil, err
	}
	return newResource(client, c.conn.Bucket, &c.opts, &driver.ResourceOptions{
		// Its errors are bare, as a driver's: the *fence.Resource's
		// Create wraps them.
		Create: func(ctx context.Context) error { return s3conn.CreateBucket(ctx, client, c.conn.Bucket) },
	})
}
