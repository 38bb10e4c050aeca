package azblob

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

func TestNewChecksOptions(t *testing.T) {
	t.Parallel()
	if _, err := New(nil, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New(nil) = %v; want an error matching fence.ErrInvalid", err)
	}
	c := azuritetest.Client(t, "fence-unused", nil, false)
	if _, err := New(c, &Options{CleanupTimeout: -time.Second}); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New with a negative CleanupTimeout = %v; want an error matching fence.ErrInvalid", err)
	}
	d, err := newStore(c, nil)
	if err != nil || d.cleanup != DefaultCleanupTimeout {
		t.Errorf("New(c, nil) made %+v, %v; want the default cleanup timeout", d, err)
	}
}

// TestAs: As gives the container client under a Locker, the caller's
// from New and the one the opener made from a URL, and nothing else. It
// makes no request.
func TestAs(t *testing.T) {
	t.Parallel()
	c := azuritetest.Client(t, "fence-unused", nil, false)
	l, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got *container.Client
	if !l.As(&got) || got != c {
		t.Errorf("As(**container.Client) of New's Locker = %v; want the client given to New", got)
	}
	var other *blob.Client
	if l.As(&other) || l.As(nil) || l.As(c) {
		t.Error("As succeeded for a target other than **container.Client")
	}

	opened, err := open(azuritetest.ParseURL(t, "azblob://fence-opened?account=acct&endpoint=http://127.0.0.1:1/acct"), nil, env{EnvAccountKey: "a2V5"}.get)
	if err != nil {
		t.Fatal(err)
	}
	if got = nil; !opened.As(&got) || got == nil || got.URL() != "http://127.0.0.1:1/acct/fence-opened" {
		t.Errorf("As(**container.Client) of an opened Locker = %v; want the client of the URL's container", got)
	}
}

// TestCreate checks that the Locker's Create creates its container, which
// is missing until then (fence.ErrStoreMissing), and can run again.
func TestCreate(t *testing.T) {
	t.Parallel()
	name := "fence-create-" + strings.ToLower(key(t)[2:])
	l := newLocker(t, azuritetest.Client(t, name, nil, false), nil)
	_, err := l.Acquire(t.Context(), key(t), MinTTL, nil)
	if !errors.Is(err, fence.ErrStoreMissing) || !bloberror.HasCode(err, bloberror.ContainerNotFound) || !strings.Contains(err.Error(), "Create") {
		t.Fatalf("Acquire in a missing container: %v; want an error matching fence.ErrStoreMissing and ContainerNotFound that points to Create", err)
	}
	for range 2 {
		if err := l.Create(t.Context()); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	t.Cleanup(func() { _, _ = l.d.c.Delete(context.Background(), nil) })
	mustAcquire(t, l, key(t), MinTTL, nil)
}

// TestBadOwner checks that an owner id Azure metadata cannot hold is
// refused before anything is written.
func TestBadOwner(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, false), nil)
	k := key(t)
	for _, owner := range []string{"é", "a\nb", " a", strings.Repeat("o", MaxOwnerLen+1)} {
		_, err := l.Acquire(t.Context(), k, MinTTL, &fence.AcquireOptions{Owner: owner})
		if _, ok := errors.AsType[*fence.InvalidError](err); !ok {
			t.Errorf("Acquire with owner %q: %v; want a *fence.InvalidError", owner, err)
		}
	}
	if _, err := l.d.c.NewBlobClient(k).GetProperties(t.Context(), nil); !bloberror.HasCode(err, bloberror.BlobNotFound) {
		t.Fatalf("the blob of a key only refused exists or cannot be read: %v", err)
	}
}

// TestKeysAreBlobNames checks that a key names the blob verbatim, also
// with characters the SDK escapes in the URL.
func TestKeysAreBlobNames(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, false), nil)
	for _, k := range []string{"jobs/nightly report", "a%2Fb", "q?x#y", "é名/😀"} {
		lease := mustAcquire(t, l, k, MinTTL, nil)
		resp, err := l.d.c.NewBlobClient(k).GetProperties(t.Context(), nil)
		if err != nil {
			t.Fatalf("GetProperties of blob %q: %v", k, err)
		}
		if v, _ := lookup(resp.Metadata, metaToken); v != lease.Token.String() {
			t.Fatalf("blob %q has token %q; want %d", k, v, lease.Token)
		}
	}
	pager := l.d.c.NewListBlobsFlatPager(nil)
	var names []string
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatalf("list blobs: %v", err)
		}
		for _, b := range page.Segment.BlobItems {
			names = append(names, *b.Name)
		}
	}
	if len(names) != 4 {
		t.Fatalf("the container holds blobs %q; want one per key", names)
	}
}

// TestRoundTrips counts the requests each method sends, and checks that a
// lost Acquire of a settled key names the holder after two reads.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	n := &counter{}
	l := newLocker(t, azuritetest.NewContainer(t, n, false), nil)
	k := key(t)
	count := func(what string, want int64, f func()) {
		t.Helper()
		before := n.n.Load()
		f()
		if got := n.n.Load() - before; got != want {
			t.Errorf("%s sent %d requests; want %d", what, got, want)
		}
	}
	var lease fence.Lease
	count("Acquire of a new key", 4, func() { lease = mustAcquire(t, l, k, MinTTL, nil) })
	count("Renew", 1, func() {
		if _, err := l.Renew(t.Context(), lease); err != nil {
			t.Fatalf("Renew: %v", err)
		}
	})
	count("Inspect of a held key", 2, func() {
		if _, err := l.Inspect(t.Context(), k); err != nil {
			t.Fatalf("Inspect: %v", err)
		}
	})
	count("Acquire of a held key", 2, func() {
		_, err := l.Acquire(t.Context(), k, MinTTL, nil)
		he, ok := errors.AsType[*fence.HeldError](err)
		if !ok || he.Owner != lease.Owner || he.Token != lease.Token {
			t.Fatalf("Acquire of a held key: %v; want a HeldError naming owner %q and token %d", err, lease.Owner, lease.Token)
		}
	})
	count("Release", 1, func() {
		if err := l.Release(t.Context(), lease); err != nil {
			t.Fatalf("Release: %v", err)
		}
	})
	count("Inspect of a free key", 1, func() {
		if _, err := l.Inspect(t.Context(), k); err != nil {
			t.Fatalf("Inspect: %v", err)
		}
	})
	count("Break of a free key", 1, func() {
		if err := l.Break(t.Context(), k); err != nil {
			t.Fatalf("Break: %v", err)
		}
	})
	count("Acquire of a known key", 3, func() { lease = mustAcquire(t, l, k, MinTTL, nil) })
	count("Break of a held key", 3, func() {
		if err := l.Break(t.Context(), k); err != nil {
			t.Fatalf("Break: %v", err)
		}
	})
}

// TestBreakRetiresTheLease checks what Azure alone would not give: after
// Break, the broken holder can neither release nor renew, and the blob is
// left without a lease.
func TestBreakRetiresTheLease(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, false), nil)
	lease := mustAcquire(t, l, key(t), MinTTL, nil)
	if err := l.Break(t.Context(), lease.Key); err != nil {
		t.Fatalf("Break: %v", err)
	}
	if err := l.Release(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Release of a broken lease: %v; want an error matching fence.ErrNotHeld", err)
	}
	if _, err := l.Renew(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew of a broken lease: %v; want an error matching fence.ErrNotHeld", err)
	}
	resp, err := l.d.c.NewBlobClient(lease.Key).GetProperties(t.Context(), nil)
	if err != nil {
		t.Fatalf("GetProperties: %v", err)
	}
	if *resp.LeaseState != azlease.StateTypeAvailable {
		t.Fatalf("lease state after Break is %q; want %q", *resp.LeaseState, azlease.StateTypeAvailable)
	}
	wantFree(t, l, lease.Key, lease.Owner, lease.Token)
}

// TestLocalExpiry checks that Renew and Release of a lease past its
// ValidUntil on the locker's clock answer ErrNotHeld without a request,
// although Azure would still renew or release it.
func TestLocalExpiry(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now())
	n := &counter{}
	l := newLocker(t, azuritetest.NewContainer(t, n, false), &Options{Clock: clock})
	lease := mustAcquire(t, l, key(t), MinTTL, nil)
	if want := clock.Now().Add(MinTTL); !lease.ValidUntil.Equal(want) {
		t.Fatalf("ValidUntil = %v; want the send time plus TTL, %v", lease.ValidUntil, want)
	}
	clock.Advance(MinTTL)
	before := n.n.Load()
	if _, err := l.Renew(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew past ValidUntil: %v; want an error matching fence.ErrNotHeld", err)
	}
	if err := l.Release(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Release past ValidUntil: %v; want an error matching fence.ErrNotHeld", err)
	}
	if sent := n.n.Load() - before; sent != 0 {
		t.Fatalf("Renew and Release past ValidUntil sent %d requests; want none", sent)
	}
	// The service still has the lease (its 15 s have not passed): proof
	// that nothing was released.
	wantHeld(t, plainLocker(t, l), lease)
}

// TestRebuiltLease checks a lease rebuilt from Inspect (zero ValidUntil):
// the Locker that gave it out knows it by its key, owner and token and
// renews and releases it, but refuses a forged one; a Locker that did not
// give it out refuses it without a request, as the service alone cannot
// tell it from a lease that ran out.
func TestRebuiltLease(t *testing.T) {
	t.Parallel()
	n := &counter{}
	c := azuritetest.NewContainer(t, n, false)
	l := newLocker(t, c, nil)
	held := mustAcquire(t, l, key(t), MinTTL, nil)
	info, err := l.Inspect(t.Context(), held.Key)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	rebuilt := fence.Lease{Key: info.Key, Owner: info.Owner, Token: info.Token, TTL: MinTTL}
	before := n.n.Load()
	if _, err := newLocker(t, c, nil).Renew(t.Context(), rebuilt); !errors.Is(err, fence.ErrNotHeld) || n.n.Load() != before {
		t.Fatalf("Renew by another Locker of a lease rebuilt from Inspect: %v after %d requests; want an error matching fence.ErrNotHeld and none", err, n.n.Load()-before)
	}
	forged := rebuilt
	forged.Token++
	if _, err := l.Renew(t.Context(), forged); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew of a forged lease: %v; want an error matching fence.ErrNotHeld", err)
	}
	renewed, err := l.Renew(t.Context(), rebuilt)
	if err != nil || renewed.ValidUntil.IsZero() {
		t.Fatalf("Renew of the lease rebuilt from Inspect = %+v, %v; want it renewed with a ValidUntil", renewed, err)
	}
	if err := l.Release(t.Context(), rebuilt); err != nil {
		t.Fatalf("Release of the lease rebuilt from Inspect: %v", err)
	}
	if err := l.Release(t.Context(), rebuilt); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("a second Release: %v; want an error matching fence.ErrNotHeld", err)
	}
}

// TestKeepsOtherMetadata checks that the token write keeps metadata that
// others put on the blob (Set Blob Metadata replaces all of it).
func TestKeepsOtherMetadata(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, false), nil)
	first := mustAcquire(t, l, key(t), MinTTL, nil)
	if err := l.Release(t.Context(), first); err != nil {
		t.Fatalf("Release: %v", err)
	}
	b := l.d.c.NewBlobClient(first.Key)
	resp, err := b.GetProperties(t.Context(), nil)
	if err != nil {
		t.Fatalf("GetProperties: %v", err)
	}
	meta := resp.Metadata
	meta["Team"] = ptr("payments")
	if _, err := b.SetMetadata(t.Context(), meta, nil); err != nil {
		t.Fatalf("SetMetadata: %v", err)
	}
	second := mustAcquire(t, l, first.Key, MinTTL, nil)
	resp, err = b.GetProperties(t.Context(), nil)
	if err != nil {
		t.Fatalf("GetProperties: %v", err)
	}
	if v, ok := lookup(resp.Metadata, "team"); !ok || v != "payments" {
		t.Fatalf("after Acquire the blob's metadata is %v; want Team kept", resp.Metadata)
	}
	if v, _ := lookup(resp.Metadata, metaToken); v != second.Token.String() {
		t.Fatalf("token in metadata %q; want %d", v, second.Token)
	}
}

// TestAcquireCompletesACrashedAttempt checks a key left leased by an
// acquirer that stopped between its lease and its token write (taken here
// by hand with the lease id it would have used): other owners lose to it,
// Inspect shows the key as never acquired, and the same owner's retry
// proposes the same lease id and completes the acquisition.
func TestAcquireCompletesACrashedAttempt(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, false), nil)
	k, owner := key(t), fence.NewOwnerID()
	if _, err := l.d.create(t.Context(), k); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := l.d.acquireLease(t.Context(), k, LeaseID(k, owner, 1, MinTTL), MinTTL, ""); err != nil {
		t.Fatalf("lease by hand: %v", err)
	}
	_, err := l.Acquire(t.Context(), k, MinTTL, nil)
	if he, ok := errors.AsType[*fence.HeldError](err); !ok || he.Owner != "" || he.Token != 0 {
		t.Fatalf("Acquire by another owner: %v; want a HeldError naming nobody", err)
	}
	wantFree(t, l, k, "", 0)
	lease := mustAcquire(t, l, k, MinTTL, &fence.AcquireOptions{Owner: owner})
	if lease.Token != 1 {
		t.Fatalf("the retry got token %d; want 1", lease.Token)
	}
	wantHeld(t, l, lease)
}
