package azblob

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
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
	c, err := cfg.client(getenv, urlparam.HTTPClient(opts))
	if err != nil {
		return nil, &fence.OpError{Backend: backendName, Op: "open", Err: err}
	}
	return New(c, &cfg.opts)
}

// config is what an azblob URL says.
type config struct {
	container string
	account   string  // "" for the environment's
	endpoint  string  // "" for Azure's public endpoint of the account
	opts      Options // Prefix
}

// parseURL reads an azblob URL. Every error matches fence.ErrInvalid.
func parseURL(u *url.URL) (config, error) {
	p := urlparam.New(u)
	if e, err := url.Parse(u.Query().Get("endpoint")); err == nil && e.User != nil {
		// Refused before p.Endpoint does, whose message shows the URL
		// with the endpoint's password if it is escaped.
		return config{}, &fence.InvalidError{Field: "url", Reason: "the endpoint carries user information; credentials come from the environment"}
	}
	cfg := config{container: p.Name("container"), account: p.String("account"), endpoint: p.Endpoint()}
	cfg.opts.Prefix = p.Optional("prefix")
	if cfg.container != "" && !validContainer(cfg.container) {
		p.Fail("%q is not an Azure container name (3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit)", cfg.container)
	}
	if cfg.account != "" && !validAccount(cfg.account) {
		p.Fail("account %q is not an Azure storage account name (3 to 24 lower-case letters and digits)", cfg.account)
	}
	if err := p.Done(); err != nil {
		return config{}, err
	}
	return cfg, nil
}

// validContainer reports whether name is an Azure container name.
func validContainer(name string) bool {
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

// validAccount reports whether name is an Azure storage account name.
func validAccount(name string) bool {
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

// client builds the client of cfg's container with the credentials
// getenv finds: a connection string, or an account with a shared key or
// a SAS token. hc, when not nil, carries the requests.
func (cfg config) client(getenv func(string) string, hc *http.Client) (*container.Client, error) {
	opts := &container.ClientOptions{}
	if hc != nil {
		opts.Transport = hc
	}
	conn := getenv(EnvConnectionString)
	if conn != "" && cfg.endpoint == "" && cfg.account == "" {
		c, err := container.NewClientFromConnectionString(conn, cfg.container, opts)
		if err != nil {
			// The SDK's message can quote the connection string.
			return nil, &fence.InvalidError{Field: EnvConnectionString, Reason: "not a usable connection string"}
		}
		return c, nil
	}
	account := cfg.account
	if account == "" {
		account = getenv(EnvAccount)
	}
	if account == "" && conn != "" && cfg.endpoint != "" {
		return cfg.connStringClient(conn, opts)
	}
	if account == "" {
		return nil, &fence.InvalidError{Field: "Azure credentials", Reason: fmt.Sprintf("none for azblob://%s: set %s, or %s (or ?account=) with %s or %s",
			cfg.container, EnvConnectionString, EnvAccount, EnvAccountKey, EnvSASToken)}
	}
	base := cfg.endpoint
	if base == "" {
		base = "https://" + account + ".blob.core.windows.net"
	}
	u := base + "/" + cfg.container
	if key := getenv(EnvAccountKey); key != "" {
		cred, err := container.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, &fence.InvalidError{Field: EnvAccountKey, Reason: "not a usable account key"}
		}
		return container.NewClientWithSharedKeyCredential(u, cred, opts)
	}
	if sas := strings.TrimPrefix(getenv(EnvSASToken), "?"); sas != "" {
		return container.NewClientWithNoCredential(u+"?"+sas, opts)
	}
	return nil, &fence.InvalidError{Field: "Azure credentials", Reason: fmt.Sprintf("none for account %q: set %s or %s", account, EnvAccountKey, EnvSASToken)}
}

// connStringClient builds the client of cfg's container at cfg's endpoint
// with the account and the key or SAS token of the connection string
// conn; its endpoints are set aside.
func (cfg config) connStringClient(conn string, opts *container.ClientOptions) (*container.Client, error) {
	var account, key, sasToken string
	for part := range strings.SplitSeq(conn, ";") {
		k, v, _ := strings.Cut(part, "=")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "accountname":
			account = v
		case "accountkey":
			key = v
		case "sharedaccesssignature":
			sasToken = strings.TrimPrefix(v, "?")
		}
	}
	// The SDK's messages, and so ours, do not quote the string.
	unusable := &fence.InvalidError{Field: EnvConnectionString, Reason: "not a usable connection string: it needs AccountName with AccountKey or SharedAccessSignature"}
	u := cfg.endpoint + "/" + cfg.container
	switch {
	case account != "" && key != "":
		cred, err := container.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, unusable
		}
		return container.NewClientWithSharedKeyCredential(u, cred, opts)
	case sasToken != "":
		return container.NewClientWithNoCredential(u+"?"+sasToken, opts)
	}
	return nil, unusable
}
