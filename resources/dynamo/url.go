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

func init() { driver.RegisterResource("dynamodb", URLOpener{}) }

// URLOpener opens Resources from URLs of the form
//
//	dynamodb://TABLE[?region=R&endpoint=URL&key-attribute=A]
//
// TABLE is the table, region the AWS region (default: the SDK's chain:
// AWS_REGION, the profile, ...), endpoint the DynamoDB endpoint (for
// emulators and private endpoints; default: the SDK's, which reads
// AWS_ENDPOINT_URL_DYNAMODB), key-attribute Options.KeyAttribute.
// Credentials come from the SDK's default chain (environment, shared
// files, roles), as config.LoadDefaultConfig finds them. The client sends
// its requests through OpenOptions.HTTPClient when set. Opened.Create
// creates the table (CreateTable).
type URLOpener struct{}

// URLForm implements driver.ResourceOpener.
func (URLOpener) URLForm() string { return "dynamodb://TABLE[?region=R&endpoint=URL&key-attribute=A]" }

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
func (URLOpener) OpenResourceURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (fence.Opened[*fence.Resource], error) {
	var none fence.Opened[*fence.Resource]
	c, err := parseURL(u)
	if err != nil {
		return none, err
	}
	client, err := dynamotable.Client(ctx, c.region, c.endpoint, urlparam.HTTPClient(opts))
	if err != nil {
		return none, &fence.OpError{Backend: backend, Op: "open", Key: c.table, Err: err}
	}
	r, err := New(client, c.table, &Options{KeyAttribute: c.keyAttribute})
	if err != nil {
		return none, err
	}
	create := func(ctx context.Context) error {
		return CreateTable(ctx, client, c.table, &TableOptions{KeyAttribute: c.keyAttribute})
	}
	return fence.Opened[*fence.Resource]{Value: r.PortableResource, Create: create}, nil
}
