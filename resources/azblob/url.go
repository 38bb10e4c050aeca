package azblob

import (
	"context"
	"net/url"
	"os"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterResource("azblob", urlOpener{}) }

// Environment variables read for Azure credentials by the URL opener, the
// same as lockers/azblob reads, and Azure's own tools.
const (
	// EnvConnectionString is a storage account connection string. It is
	// used when the URL names neither an account nor an endpoint.
	EnvConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	// EnvAccount names the storage account when the URL has no account
	// parameter.
	EnvAccount = "AZURE_STORAGE_ACCOUNT"
	// EnvAccountKey is the account's shared key (base64).
	EnvAccountKey = "AZURE_STORAGE_KEY"
	// EnvSASToken is a shared access signature for the container, with
	// or without its leading '?'; used when EnvAccountKey is unset.
	EnvSASToken = "AZURE_STORAGE_SAS_TOKEN"
)

// urlOpener opens resources on the URLs of scheme azblob (see the package
// doc, "Opening by URL").
type urlOpener struct{}

var _ driver.ResourceOpener = urlOpener{}

// URLForm implements driver.ResourceOpener.
func (urlOpener) URLForm() string {
	return "azblob://CONTAINER[?account=A&endpoint=URL&prefix=P]"
}

// OpenResourceURL implements driver.ResourceOpener. It does not contact
// the service. The resource's Create creates the container; the client
// needs no closing.
func (urlOpener) OpenResourceURL(_ context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Resource, error) {
	return open(u, opts, os.Getenv)
}

// open opens u with the credentials getenv finds.
func open(u *url.URL, opts *fence.OpenOptions, getenv func(string) string) (*fence.Resource, error) {
	cfg, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	c, err := cfg.Client(getenv, urlparam.HTTPClient(opts))
	if err != nil {
		return nil, &fence.OpError{Backend: backendName, Op: "open", Err: err}
	}
	return New(c, &cfg.opts)
}

// config is what an azblob URL says.
type config struct {
	azblobconn.Config
	opts Options // Prefix
}

// parseURL reads an azblob URL. Every error matches fence.ErrInvalid.
func parseURL(u *url.URL) (config, error) {
	p := urlparam.New(u)
	conn, err := azblobconn.Parse(u, p)
	if err != nil {
		return config{}, err
	}
	cfg := config{Config: conn}
	cfg.opts.Prefix = p.Optional("prefix")
	if err := p.Done(); err != nil {
		return config{}, err
	}
	return cfg, nil
}
