package azblobconn

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
)

// The environment variables read for Azure credentials, as by Azure's own
// tools. lockers/azblob and resources/azblob export the same names.
const (
	EnvConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	EnvAccount          = "AZURE_STORAGE_ACCOUNT"
	EnvAccountKey       = "AZURE_STORAGE_KEY"
	EnvSASToken         = "AZURE_STORAGE_SAS_TOKEN"
)

// Client builds the client of cfg's container with the credentials
// getenv finds: a connection string, or an account with a shared key or
// a SAS token. hc, when not nil, carries the requests. Every error is a
// *fence.InvalidError that quotes no secret.
func (cfg Config) Client(getenv func(string) string, hc *http.Client) (*container.Client, error) {
	opts := &container.ClientOptions{}
	if hc != nil {
		opts.Transport = hc
	}
	conn := getenv(EnvConnectionString)
	if conn != "" && cfg.Endpoint == "" && cfg.Account == "" {
		c, err := container.NewClientFromConnectionString(conn, cfg.Container, opts)
		if err != nil {
			// The SDK's message can quote the connection string.
			return nil, &fence.InvalidError{Field: EnvConnectionString, Reason: "not a usable connection string"}
		}
		return c, nil
	}
	account := cfg.Account
	if account == "" {
		account = getenv(EnvAccount)
	}
	if account == "" && conn != "" && cfg.Endpoint != "" {
		return cfg.connStringClient(conn, opts)
	}
	if account == "" {
		return nil, &fence.InvalidError{Field: "Azure credentials", Reason: fmt.Sprintf("none for azblob://%s: set %s, or %s (or ?account=) with %s or %s",
			cfg.Container, EnvConnectionString, EnvAccount, EnvAccountKey, EnvSASToken)}
	}
	base := cfg.Endpoint
	if base == "" {
		base = "https://" + account + ".blob.core.windows.net"
	}
	u := base + "/" + cfg.Container
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
func (cfg Config) connStringClient(conn string, opts *container.ClientOptions) (*container.Client, error) {
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
	u := cfg.Endpoint + "/" + cfg.Container
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
