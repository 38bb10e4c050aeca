package azblobconn

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
	"github.com/fencekit/fence/internal/urlparam"
)

// parse reads raw as an opener does: Parse, then p.Done.
func parse(u *url.URL) (Config, error) {
	p := urlparam.New(u)
	cfg, err := Parse(u, p)
	if err != nil {
		return Config{}, err
	}
	if err := p.Done(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want Config
	}{
		{"azblob://locks", Config{Container: "locks"}},
		{"azblob://locks/", Config{Container: "locks"}},
		{"azblob://ops-locks-1?account=acct&endpoint=https://acct.blob.core.windows.net/",
			Config{Container: "ops-locks-1", Account: "acct", Endpoint: "https://acct.blob.core.windows.net"}},
		{"azblob://abc?endpoint=http://127.0.0.1:10000/devstoreaccount1", Config{Container: "abc", Endpoint: "http://127.0.0.1:10000/devstoreaccount1"}},
		{"azblob://" + strings.Repeat("a", 63) + "?account=" + strings.Repeat("9", 24), Config{Container: strings.Repeat("a", 63), Account: strings.Repeat("9", 24)}},
	}
	for _, tt := range tests {
		got, err := parse(azuritetest.ParseURL(t, tt.raw))
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, want string
	}{
		{"azblob://", "no container name"},
		{"azblob://?account=abc", "no container name"},
		{"azblob://locks:10000", "no port"},
		{"azblob://locks/extra", "unexpected path"},
		{"azblob://user:s3cretpw@locks", "credentials come from the environment"},
		{"azblob://locks?key=abc", `unknown parameter "key"`},
		{"azblob://locks?password=s3cretpw", `unknown parameter "password"`},
		{"azblob://locks?account=", "account is empty"},
		{"azblob://locks?account=abc&account=def", "more than once"},
		{"azblob://locks?endpoint=localhost:10000", "not an http:// or https:// URL"},
		{"azblob://locks?endpoint=http://u:s3cretpw@localhost:10000", "user information"},
		{"azblob://locks?endpoint=http%3A%2F%2Fu%3As3cretpw%40localhost", "user information"},
		{"azblob://Locks", "not an Azure container name"},
		{"azblob://ab", "not an Azure container name"},
		{"azblob://" + strings.Repeat("a", 64), "not an Azure container name"},
		{"azblob://-locks", "not an Azure container name"},
		{"azblob://locks-", "not an Azure container name"},
		{"azblob://lo--cks", "not an Azure container name"},
		{"azblob://lo_cks", "not an Azure container name"},
		{"azblob://locks?account=ab", "not an Azure storage account name"},
		{"azblob://locks?account=Acct", "not an Azure storage account name"},
		{"azblob://locks?account=evil.example%23", "not an Azure storage account name"},
		{"azblob://locks?account=" + strings.Repeat("a", 25), "not an Azure storage account name"},
	}
	for _, tt := range tests {
		_, err := parse(azuritetest.ParseURL(t, tt.raw))
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("Parse(%q) = %v; want an error matching fence.ErrInvalid", tt.raw, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v; want it to say %q", tt.raw, err, tt.want)
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("Parse(%q) shows the password: %v", tt.raw, err)
		}
	}
}

// FuzzParse checks that Parse never panics, refuses with
// fence.ErrInvalid only, accepts only container and account names Azure
// takes, and never shows a password: the fuzzed URL with a password in
// its user information or in a password parameter is refused without it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"azblob://locks", "azblob://locks?account=acct&endpoint=https://acct.blob.core.windows.net",
		"azblob://a:b@c", "azblob://c:1/p?x=%zz", "azblob://lo--cks?account=A", "azblob://locks?endpoint=http://u:p@h",
	} {
		f.Add(s)
	}
	const secret = "Zq9XsEcReTXq9Z"
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		cfg, err := parse(u)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("Parse(%q) = %v, not matching fence.ErrInvalid", raw, err)
			}
		} else {
			if !ValidContainer(cfg.Container) || cfg.Account != "" && !ValidAccount(cfg.Account) {
				t.Fatalf("Parse(%q) accepted %+v", raw, cfg)
			}
			if cfg.Endpoint != "" && !strings.HasPrefix(cfg.Endpoint, "http://") && !strings.HasPrefix(cfg.Endpoint, "https://") {
				t.Fatalf("Parse(%q) accepted the endpoint %q", raw, cfg.Endpoint)
			}
		}
		if strings.Contains(raw, secret) {
			return
		}
		withUser := *u
		withUser.User = url.UserPassword("u", secret)
		withParam := *u
		q := withParam.Query()
		q.Add("password", secret)
		withParam.RawQuery = q.Encode()
		for _, v := range []*url.URL{&withUser, &withParam} {
			_, err := parse(v)
			if err == nil {
				t.Fatalf("Parse(%q) accepted a password", v)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("Parse(%q) = %v shows the password", v, err)
			}
		}
	})
}
