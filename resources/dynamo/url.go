package dynamo

import (
	"context"
	"errors"
	"net/url"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/dynamotable"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterResource("dynamodb", urlOpener{}) }

// urlOpener opens resources from dynamodb:// URLs (see the package doc).
type urlOpener struct{}

// URLForm implements driver.ResourceOpener.
func (urlOpener) URLForm() string { return "dynamodb://TABLE[?region=R&endpoint=URL&key-attribute=A]" }

// urlConfig is what a URL says.
type urlConfig struct {
	table, region, endpoint, keyAttribute string
}

// parseURL reads u, without building a client.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	c := urlConfig{
		table:        p.Name("table"),
		region:       p.String("region"),
		endpoint:     p.Endpoint(),
		keyAttribute: p.String("key-attribute"),
	}
	if c.table != "" {
		failOn(p, checkTableName(c.table))
	}
	if c.keyAttribute != "" {
		failOn(p, driver.ValidateKey("key-attribute", c.keyAttribute, maxAttributeNameLen))
	}
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	return c, nil
}

// failOn records in p the *fence.InvalidError err, if it is one.
func failOn(p *urlparam.Params, err error) {
	if ie, bad := errors.AsType[*fence.InvalidError](err); bad {
		p.Fail("%s: %s", ie.Field, ie.Reason)
	}
}

// OpenResourceURL implements driver.ResourceOpener. It does not call
// DynamoDB.
func (urlOpener) OpenResourceURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Resource, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	client, err := dynamotable.Client(ctx, c.region, c.endpoint, urlparam.HTTPClient(opts))
	if err != nil {
		return nil, &fence.OpError{Backend: backend, Op: "open", Key: c.table, Err: err}
	}
	return New(client, c.table, &Options{KeyAttribute: c.keyAttribute})
}
