package azblob

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

// TestNotHeldNamesTheAzureCode checks the error of a Renew after Break on
// Azurite: it matches fence.ErrNotHeld, reaches the SDK's error, and is
// one line naming Azure's error code, also inside the LeaseLostError a
// guard would make of it.
func TestNotHeldNamesTheAzureCode(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, false), nil)
	lease := mustAcquire(t, l, key(t), MinTTL, nil)
	if err := l.Break(t.Context(), lease.Key); err != nil {
		t.Fatalf("Break: %v", err)
	}
	_, err := l.Renew(t.Context(), lease)
	if !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew of a broken lease: %v; want an error matching fence.ErrNotHeld", err)
	}
	azuritetest.WantOneLine(t, "Renew of a broken lease", err, notHeldCodes...)
	lost := &fence.LeaseLostError{Key: lease.Key, Token: lease.Token, Err: err}
	azuritetest.WantOneLine(t, "LeaseLostError", lost, notHeldCodes...)
	t.Logf("Renew after Break: %v", err)
}

// TestWrappedErrorsAreOneLine checks SDK errors that the locker wraps
// with what it was doing: every method in a container that does not
// exist, which also match fence.ErrStoreMissing.
func TestWrappedErrorsAreOneLine(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.Client(t, "fence-missing-"+strings.ToLower(key(t)), nil, false), nil)
	k := key(t)
	_, acquire := l.Acquire(t.Context(), k, MinTTL, nil)
	_, inspect := l.Inspect(t.Context(), k)
	lease := fence.Lease{Key: k, Owner: "o", Token: 1, TTL: MinTTL, ValidUntil: time.Now().Add(time.Hour)}
	_, renew := l.Renew(t.Context(), lease)
	for what, err := range map[string]error{
		"Acquire": acquire, "Inspect": inspect, "Break": l.Break(t.Context(), k),
		"Renew": renew, "Release": l.Release(t.Context(), lease),
	} {
		what += " in a missing container"
		azuritetest.WantOneLine(t, what, err, bloberror.ContainerNotFound)
		if !errors.Is(err, fence.ErrStoreMissing) {
			t.Errorf("%s: %v; want an error matching fence.ErrStoreMissing", what, err)
		}
		if !strings.HasPrefix(err.Error(), "fence/azblob: ") {
			t.Errorf("%s: %q; want the prefix fence/azblob:", what, err)
		}
	}
}
