package s3

import (
	"context"
	"net/url"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/objlock"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/s3conn"
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
	conn    s3conn.Config
	prefix  string
	segment int           // Options.MaxKeySegmentLen
	backoff time.Duration // Options.Backoff; 0 for DefaultBackoff
	mode    clockfree.Mode
	probe   time.Duration // Options.ProbeInterval
}

// parseURL reads u, an s3:// URL. Every error matches fence.ErrInvalid.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	c := urlConfig{conn: s3conn.Parse(p)}
	if c.conn.Bucket != "" {
		if why := badBucketName(c.conn.Bucket); why != "" {
			p.Fail("bucket name %q %s", c.conn.Bucket, why)
		}
	}
	c.prefix = p.Optional("prefix")
	if ie, ok := checkPrefix(c.prefix).(*fence.InvalidError); ok {
		p.Fail("prefix: %s", ie.Reason)
	}
	c.segment = s3conn.MaxKeySegment(p, MaxObjectKeyLen)
	c.backoff, c.mode, c.probe = objlock.ParseURLParams(p, maxBackoff)
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	return c, nil
}

// OpenLockerURL implements driver.LockerOpener. It makes a client but
// does not call S3. The Locker's Create makes the bucket.
func (urlOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	client, err := c.conn.Client(ctx, backendName, urlparam.HTTPClient(opts))
	if err != nil {
		return nil, err
	}
	d, err := newStore(client, c.conn.Bucket, &Options{
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
