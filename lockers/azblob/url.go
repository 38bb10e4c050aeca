package azblob

import (
	"context"
	"net/url"
	"os"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/urlparam"
)

func init() { driver.RegisterLocker("azblob", urlOpener{}) }

// Environment variables read for Azure credentials by the URL opener, as
// by Azure's own tools.
const (
	// EnvConnectionString is a storage account connection string. It is
	// used when the URL names neither an account nor an endpoint.
	EnvConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	// EnvAccount names the storage account when the URL has no
	// account parameter.
	EnvAccount = "AZURE_STORAGE_ACCOUNT"
	// EnvAccountKey is the account's shared key (base64).
	EnvAccountKey = "AZURE_STORAGE_KEY"
	// EnvSASToken is a shared access signature for the container, with
	// or without its leading '?'; used when EnvAccountKey is unset.
	EnvSASToken = "AZURE_STORAGE_SAS_TOKEN"
)

// urlOpener opens lockers on the URLs of scheme azblob (see the package
// doc, "Opening from a URL").
type urlOpener struct{}

var _ driver.LockerOpener = urlOpener{}

// URLForm implements driver.LockerOpener.
func (urlOpener) URLForm() string {
	return "azblob://CONTAINER[?account=A&endpoint=URL&" + probe.URLForm + "]"
}

// OpenLockerURL implements driver.LockerOpener. It does not contact the
// service. The Locker's Create creates the container; the client needs
// no closing.
func (urlOpener) OpenLockerURL(_ context.Context, u *url.URL, opts *fence.OpenOptions) (*fence.Locker, error) {
	return open(u, opts, os.Getenv)
}

// open opens u with the credentials getenv finds.
func open(u *url.URL, opts *fence.OpenOptions, getenv func(string) string) (*fence.Locker, error) {
	cfg, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	c, err := cfg.Client(getenv, urlparam.HTTPClient(opts))
	if err != nil {
		return nil, &fence.OpError{Backend: "azblob", Op: "open", Err: err}
	}
	return New(c, &Options{Clock: urlparam.Clock(opts), ProbeInterval: cfg.probe})
}

// config is what an azblob URL says.
type config struct {
	azblobconn.Config
	probe time.Duration // Options.ProbeInterval
}

// parseURL reads an azblob URL. Every error matches fence.ErrInvalid.
func parseURL(u *url.URL) (config, error) {
	p := urlparam.New(u)
	conn, err := azblobconn.Parse(u, p)
	if err != nil {
		return config{}, err
	}
	cfg := config{Config: conn, probe: probe.FromURL(p)}
	if err := p.Done(); err != nil {
		return config{}, err
	}
	return cfg, nil
}
