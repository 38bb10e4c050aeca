package azblob

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

// testLocker is a Locker with the store under it, for the tests that
// call the store or its client directly.
type testLocker struct {
	*fence.Locker
	d *store
}

// newLocker returns a Locker on c, as New makes it, failing t on error.
func newLocker(t testing.TB, c *container.Client, opts *Options) *testLocker {
	t.Helper()
	d, err := newStore(c, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	l, err := driver.NewLocker(d, &driver.LockerOptions{Clock: d.clock})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &testLocker{Locker: l, d: d}
}

// plainLocker returns a Locker on l's container through a client of its
// own, without faults or retries.
func plainLocker(t testing.TB, l *testLocker) *testLocker {
	t.Helper()
	return newLocker(t, azuritetest.Client(t, path.Base(l.d.c.URL()), nil, false), nil)
}

// wantHeld fails t unless lease holds its key: Inspect through l shows
// it, and an Acquire by another owner loses to it.
func wantHeld(t testing.TB, l *testLocker, lease fence.Lease) {
	t.Helper()
	info, err := l.Inspect(context.Background(), lease.Key)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", lease.Key, err)
	}
	if !info.Held || info.Owner != lease.Owner || info.Token != lease.Token {
		t.Fatalf("Inspect(%q) = %+v; want held by %q with token %d", lease.Key, info, lease.Owner, lease.Token)
	}
	if _, err := l.Acquire(context.Background(), lease.Key, MinTTL, nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Acquire(%q) of a held key: %v; want an error matching fence.ErrHeld", lease.Key, err)
	}
}

// wantFree fails t unless key is free with last token and owner kept.
func wantFree(t testing.TB, l *testLocker, key, owner string, token fence.Token) {
	t.Helper()
	info, err := l.Inspect(context.Background(), key)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", key, err)
	}
	if info.Held || info.Owner != owner || info.Token != token {
		t.Fatalf("Inspect(%q) = %+v; want free, last owner %q, token %d", key, info, owner, token)
	}
}

// counter is an http transport that counts the requests it forwards.
type counter struct{ n atomic.Int64 }

func (c *counter) Do(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultClient.Do(req)
}

// key returns a key unique to t.
func key(t testing.TB) string {
	return "k-" + strings.ToLower(rand.Text()[:12])
}

// caller is what mustAcquire and acquireRelease call: a *fence.Locker,
// or a *testLocker.
type caller interface {
	Acquire(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions) (fence.Lease, error)
	Release(ctx context.Context, lease fence.Lease) error
}

// mustAcquire takes key with l for ttl, failing t on error.
func mustAcquire(t testing.TB, l caller, key string, ttl time.Duration, opts *fence.AcquireOptions) fence.Lease {
	t.Helper()
	lease, err := l.Acquire(context.Background(), key, ttl, opts)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", key, err)
	}
	return lease
}
