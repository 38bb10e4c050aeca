// Package azuritetest gives the tests of the Azure Blob backends their
// containers on the shared Azurite server (see internal/testing/testenv)
// and the checks they share.
package azuritetest

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence/internal/testing/testenv"
)

// NewContainer creates a container of a unique name on Azurite, deleted
// when t ends, and returns a client for it that sends its requests through
// transport (http.DefaultClient when nil). The SDK's retries are off
// unless retries is set, so that a test sees each answer.
func NewContainer(t testing.TB, transport policy.Transporter, retries bool) *container.Client {
	t.Helper()
	c := Client(t, "fence-"+strings.ToLower(rand.Text()[:16]), transport, retries)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Create(ctx, nil); err != nil {
		t.Fatalf("create container: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.Delete(ctx, nil); err != nil {
			t.Logf("delete container: %v", err)
		}
	})
	return c
}

// Client returns a client of the container name on Azurite, whose
// requests go through transport when not nil. The SDK's retries are off
// unless retries is set; then it retries 3 times within milliseconds.
func Client(t testing.TB, name string, transport policy.Transporter, retries bool) *container.Client {
	t.Helper()
	url := testenv.AzuriteBlobURL(t)
	account, key := testenv.AzuriteAccount(t)
	cred, err := container.NewSharedKeyCredential(account, key)
	if err != nil {
		t.Fatalf("shared key: %v", err)
	}
	opts := &container.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: transport}}
	if retries {
		opts.Retry = policy.RetryOptions{MaxRetries: 3, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}
	} else {
		opts.Retry = policy.RetryOptions{MaxRetries: -1}
	}
	c, err := container.NewClientWithSharedKeyCredential(url+"/"+name, cred, opts)
	if err != nil {
		t.Fatalf("container client: %v", err)
	}
	return c
}

// WantOneLine fails t unless err is one line naming the status and Azure
// error code of the *azcore.ResponseError that errors.As still finds in
// it, with one of codes.
func WantOneLine(t testing.TB, what string, err error, codes ...bloberror.Code) {
	t.Helper()
	re, ok := errors.AsType[*azcore.ResponseError](err)
	if !ok {
		t.Fatalf("%s: %v; want an error wrapping an *azcore.ResponseError", what, err)
	}
	if !bloberror.HasCode(err, codes...) {
		t.Errorf("%s: Azure error code %q; want one of %q", what, re.ErrorCode, codes)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("%s: the message has several lines:\n%s", what, msg)
	}
	if status := http.StatusText(re.StatusCode); !strings.Contains(msg, re.ErrorCode) || !strings.Contains(msg, status) {
		t.Errorf("%s: %q does not name the code %s and the status %d %s", what, msg, re.ErrorCode, re.StatusCode, status)
	}
}

// ParseURL parses raw, failing t on error.
func ParseURL(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", raw, err)
	}
	return u
}
