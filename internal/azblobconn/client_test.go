package azblobconn_test

import (
	"errors"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/urlparam"
)

// env is a fake environment.
type env map[string]string

func (e env) get(name string) string { return e[name] }

// configOf parses raw, failing t on error.
func configOf(t *testing.T, raw string) azblobconn.Config {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", raw, err)
	}
	p := urlparam.New(u)
	cfg, err := azblobconn.Parse(u, p)
	if err == nil {
		err = p.Done()
	}
	if err != nil {
		t.Fatalf("Parse(%q): %v", raw, err)
	}
	return cfg
}

// TestClientCredentials builds clients of a container on Azurite with
// each kind of credentials the environment can hold, and writes a blob
// with each; an unusable environment is refused with fence.ErrInvalid
// without showing a secret.
func TestClientCredentials(t *testing.T) {
	t.Parallel()
	endpoint := testenv.AzuriteBlobURL(t)
	account, accountKey := testenv.AzuriteAccount(t)
	conn := testenv.AzuriteConnectionString(t)
	shared := azuritetest.NewContainer(t, nil, false)
	name := path.Base(shared.URL())
	sasURL, err := shared.GetSASURL(sas.ContainerPermissions{Read: true, Write: true, Create: true, Add: true}, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatalf("GetSASURL: %v", err)
	}
	_, sasToken, _ := strings.Cut(sasURL, "?")
	q := "?endpoint=" + url.QueryEscape(endpoint)
	elsewhere := strings.Replace(conn, endpoint, "http://127.0.0.1:1/"+account, 1)
	if elsewhere == conn {
		t.Fatalf("the connection string does not name the endpoint %s", endpoint)
	}
	const (
		EnvConnectionString = azblobconn.EnvConnectionString
		EnvAccount          = azblobconn.EnvAccount
		EnvAccountKey       = azblobconn.EnvAccountKey
		EnvSASToken         = azblobconn.EnvSASToken
	)
	tests := []struct {
		name, url string
		env       env
	}{
		{"connection string", "azblob://" + name, env{EnvConnectionString: conn}},
		{"account key", "azblob://" + name + q, env{EnvAccount: account, EnvAccountKey: accountKey}},
		{"account in the URL", "azblob://" + name + q + "&account=" + account, env{EnvAccountKey: accountKey}},
		{"account in the URL wins", "azblob://" + name + q + "&account=" + account, env{EnvAccount: "other", EnvAccountKey: accountKey}},
		{"connection string set aside for an endpoint", "azblob://" + name + q, env{EnvConnectionString: "junk", EnvAccount: account, EnvAccountKey: accountKey}},
		{"SAS token", "azblob://" + name + q, env{EnvAccount: account, EnvSASToken: sasToken}},
		{"SAS token with its ?", "azblob://" + name + q, env{EnvAccount: account, EnvSASToken: "?" + sasToken}},
		// The URL's endpoint, not the string's (which no server answers).
		{"connection string's account for an endpoint", "azblob://" + name + q, env{EnvConnectionString: elsewhere}},
		{"connection string's SAS token for an endpoint", "azblob://" + name + q,
			env{EnvConnectionString: "BlobEndpoint=http://127.0.0.1:1/" + account + ";SharedAccessSignature=" + sasToken}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := configOf(t, tt.url).Client(tt.env.get, nil)
			if err != nil {
				t.Fatalf("Client(%q): %v", tt.url, err)
			}
			if _, err := c.NewBlockBlobClient("k-"+strings.ReplaceAll(tt.name, " ", "-")).UploadBuffer(t.Context(), []byte("v"), nil); err != nil {
				t.Fatalf("a write with the client of %q: %v", tt.url, azblobconn.OneLine(err))
			}
		})
	}
	bad := []struct {
		name, url string
		env       env
		secret    string
	}{
		{"nothing", "azblob://" + name, env{}, ""},
		{"account without a secret", "azblob://" + name + "?account=" + account, env{EnvConnectionString: conn}, ""},
		{"connection string unusable", "azblob://" + name, env{EnvConnectionString: "AccountKey=s3cretkey;junk"}, "s3cretkey"},
		{"connection string unusable for an endpoint", "azblob://" + name + q, env{EnvConnectionString: "AccountKey=s3cretkey;junk"}, "s3cretkey"},
		{"connection string's key unusable for an endpoint", "azblob://" + name + q, env{EnvConnectionString: "AccountName=" + account + ";AccountKey=s3cretkey!"}, "s3cretkey"},
		{"account key unusable", "azblob://" + name, env{EnvAccount: account, EnvAccountKey: "s3cretkey!"}, "s3cretkey"},
	}
	for _, tt := range bad {
		_, err := configOf(t, tt.url).Client(tt.env.get, nil)
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("Client(%q) with %s: %v; want an error matching fence.ErrInvalid", tt.url, tt.name, err)
			continue
		}
		if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
			t.Errorf("Client(%q) with %s: %v shows the secret", tt.url, tt.name, err)
		}
	}
}
