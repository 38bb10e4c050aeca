package azblobconn_test

import (
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

// TestOneLineWithoutCode checks the message of an answer that carries no
// Azure error code, and that an error without an answer is kept.
func TestOneLineWithoutCode(t *testing.T) {
	t.Parallel()
	err := azblobconn.OneLine(&azcore.ResponseError{StatusCode: http.StatusServiceUnavailable})
	if got, want := err.Error(), "azure: 503 Service Unavailable: no error code"; got != want {
		t.Errorf("message %q; want %q", got, want)
	}
	if _, ok := errors.AsType[*azcore.ResponseError](err); !ok {
		t.Errorf("errors.As does not reach the *azcore.ResponseError in %v", err)
	}
	plain := errors.New("dial tcp: refused")
	if azblobconn.OneLine(plain) != plain {
		t.Errorf("OneLine changed an error that is not an answer of the service")
	}
}

// TestOneLineOnAzurite checks Azurite's answers told in one line: a
// missing container matches fence.ErrStoreMissing, a missing blob does
// not, and both name their code and reach the SDK's error.
func TestOneLineOnAzurite(t *testing.T) {
	t.Parallel()
	missing := azuritetest.Client(t, "fence-missing-"+strings.ToLower(rand.Text()[:12]), nil, false)
	_, err := missing.NewBlockBlobClient("k").UploadBuffer(t.Context(), []byte("v"), nil)
	err = azblobconn.OneLine(err)
	azuritetest.WantOneLine(t, "a write in a missing container", err, bloberror.ContainerNotFound)
	if !errors.Is(err, fence.ErrStoreMissing) {
		t.Errorf("a write in a missing container: %v; want an error matching fence.ErrStoreMissing", err)
	}
	c := azuritetest.NewContainer(t, nil, false)
	_, err = c.NewBlockBlobClient("k").UploadBuffer(t.Context(), []byte("v"), nil)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	_, err = c.NewBlockBlobClient("k").Delete(t.Context(), nil)
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = c.NewBlockBlobClient("k").Delete(t.Context(), nil)
	err = azblobconn.OneLine(err)
	azuritetest.WantOneLine(t, "a delete of a missing blob", err, bloberror.BlobNotFound)
	if errors.Is(err, fence.ErrStoreMissing) {
		t.Errorf("a delete of a missing blob: %v matches fence.ErrStoreMissing", err)
	}
}
