package azblobconn

import (
	"net/url"
	"strings"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/urlparam"
)

// Config is what an azblob URL says about where the container is.
type Config struct {
	Container string
	Account   string // "" for the environment's
	Endpoint  string // "" for Azure's public endpoint of the account
}

// Parse reads the container (the URL's host), the account and the
// endpoint parameters of the azblob URL u through p, which the caller
// made with urlparam.New(u). A bad container or account name is recorded
// in p, so the caller reads its own parameters and reports every problem
// with p.Done. An endpoint carrying user information is returned at once
// as a *fence.InvalidError, before p could quote it.
func Parse(u *url.URL, p *urlparam.Params) (Config, error) {
	if e, err := url.Parse(u.Query().Get("endpoint")); err == nil && e.User != nil {
		// Refused before p.Endpoint does, whose message shows the URL
		// with the endpoint's password if it is escaped.
		return Config{}, &fence.InvalidError{Field: "url", Reason: "the endpoint carries user information; credentials come from the environment"}
	}
	cfg := Config{Container: p.Name("container"), Account: p.String("account"), Endpoint: p.Endpoint()}
	if cfg.Container != "" && !ValidContainer(cfg.Container) {
		p.Fail("%q is not an Azure container name (3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit)", cfg.Container)
	}
	if cfg.Account != "" && !ValidAccount(cfg.Account) {
		p.Fail("account %q is not an Azure storage account name (3 to 24 lower-case letters and digits)", cfg.Account)
	}
	return cfg, nil
}

// ValidContainer reports whether name is an Azure container name.
func ValidContainer(name string) bool {
	if len(name) < 3 || len(name) > 63 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !lowerOrDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

// ValidAccount reports whether name is an Azure storage account name.
func ValidAccount(name string) bool {
	if len(name) < 3 || len(name) > 24 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !lowerOrDigit(name[i]) {
			return false
		}
	}
	return true
}

func lowerOrDigit(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
