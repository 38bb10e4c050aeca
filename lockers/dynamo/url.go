package dynamo

import (
	"context"
	"net/url"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/dynamotable"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterLocker("dynamodb", urlOpener{}) }

// urlOpener opens DynamoDB lockers from URLs of the form URLForm returns
// (see the package doc), with a client built by config.LoadDefaultConfig
// from the AWS SDK's usual environment.
type urlOpener struct{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "dynamodb://TABLE[?region=R&endpoint=URL&key-attribute=A&" + clockfree.URLForm + "&" + probe.URLForm + "]"
}

// urlConfig is what a dynamodb:// URL says.
type urlConfig struct {
	table        string
	region       string // "" for the SDK's default chain
	endpoint     string // "" for the SDK's default
	keyAttribute string // "" for DefaultKeyAttribute
	mode         clockfree.Mode
	probe        time.Duration // Options.ProbeInterval
}

// parseURL reads a dynamodb:// URL and checks what it names as New would.
// Every error matches fence.ErrInvalid.
func parseURL(u *url.URL) (urlConfig, error) {
	p := urlparam.New(u)
	c := urlConfig{
		table:        p.Name("table"),
		region:       p.String("region"),
		endpoint:     p.Endpoint(),
		keyAttribute: p.String("key-attribute"),
		mode:         clockfree.FromURL(p),
		probe:        probe.FromURL(p),
	}
	if err := p.Done(); err != nil {
		return urlConfig{}, err
	}
	if err := checkTable(c.table); err != nil {
		return urlConfig{}, err
	}
	if c.keyAttribute != "" {
		if err := checkKeyAttribute(c.keyAttribute); err != nil {
			return urlConfig{}, err
		}
	}
	if err := c.mode.Check(); err != nil {
		return urlConfig{}, err
	}

	return c, nil
}

// OpenLockerURL implements driver.LockerOpener. It loads the AWS
// configuration but does not call DynamoDB. The Locker's Create creates
// the table (CreateTable); the client needs no closing.
func (urlOpener) OpenLockerURL(ctx context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	c, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	client, err := dynamotable.Client(ctx, c.region, c.endpoint, urlparam.HTTPClient(opts))
	if err != nil {
		return nil, &fence.OpError{Backend: "dynamo", Op: "open", Err: err}
	}
	return New(client, c.table, &Options{
		KeyAttribute:  c.keyAttribute,
		Clock:         urlparam.Clock(opts),
		TrustedClock:  c.mode.TrustedClock,
		MaxClockSkew:  c.mode.MaxClockSkew,
		ProbeInterval: c.probe,
	})
}
