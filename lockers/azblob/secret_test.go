package azblob

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
)

// printed returns every text a reader of a program's output can see
// about lease: the lease itself, the LockInfo of an Inspect and the error
// a second owner's Acquire gets, each through every fmt verb that prints
// a struct or an error.
func printed(t *testing.T, l *testLocker, lease fence.Lease) string {
	t.Helper()
	ctx := t.Context()
	info, err := l.Inspect(ctx, lease.Key)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	_, heldErr := plainLocker(t, l).Acquire(ctx, lease.Key, MinTTL, nil)
	he, ok := errors.AsType[*fence.HeldError](heldErr)
	if !ok || he.Owner != lease.Owner {
		// The field is the raw id (callers need it); only printing hides it.
		t.Fatalf("a second owner's Acquire: %v; want a HeldError naming the holder in its field", heldErr)
	}
	var b strings.Builder
	for _, v := range []any{lease, &lease, info, heldErr, he, *he} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			fmt.Fprintf(&b, verb+"\n", v)
		}
		fmt.Fprintln(&b, v)
	}
	b.WriteString(heldErr.Error() + "\n")
	return b.String()
}

// words are the strings of text a reader would try as an owner id or a
// lease id: every run of letters, digits and "-_:.", and each without a
// "owner:" prefix.
var words = regexp.MustCompile(`[A-Za-z0-9_:.\-]+`)

// candidates returns the lease ids a reader of text could compute for
// key's lease with token and ttl (printed or known): LeaseID of every
// word taken as the owner, and every word itself.
func candidates(text, key string, token fence.Token, ttl time.Duration) []string {
	var ids []string
	for _, w := range words.FindAllString(text, -1) {
		for _, owner := range []string{w, strings.TrimPrefix(w, "owner:"), strings.Trim(w, ".:")} {
			if owner != "" {
				ids = append(ids, LeaseID(key, owner, token, ttl), owner)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// actsOn reports whether id works as the lease id of key's blob: a
// renewal with Azure's own lease client succeeds. release also releases
// with it.
func actsOn(ctx context.Context, t *testing.T, c *container.Client, key, id string, release bool) bool {
	t.Helper()
	lc, err := azlease.NewBlobClient(c.NewBlobClient(key), &azlease.BlobClientOptions{LeaseID: &id})
	if err != nil {
		t.Fatalf("lease client: %v", err)
	}
	if release {
		_, err = lc.ReleaseLease(ctx, nil)
		return err == nil
	}
	_, err = lc.RenewLease(ctx, nil)
	return err == nil
}

// TestPrintedOutputGivesNoLease: from everything a reader can see of a
// held lease (the Lease and LockInfo printed, the HeldError a second owner
// gets), nobody can compute a lease id that renews or releases it with
// Azure's lease client, nor a fence.Lease that another Locker's Release or
// Renew accepts; the holder still can. As a control, the same attacks
// with the raw owner id (LockInfo.Owner, HeldError.Owner) succeed, which
// is why outputs must not print it.
func TestPrintedOutputGivesNoLease(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := azuritetest.NewContainer(t, nil, false)
	l := newLocker(t, c, nil)
	reader := plainLocker(t, l)
	lease := mustAcquire(t, l, key(t), MinTTL, nil)

	text := printed(t, l, lease)
	if strings.Contains(text, lease.Owner) {
		t.Fatalf("the output holds the owner id %q:\n%s", lease.Owner, text)
	}
	if !strings.Contains(text, fence.OwnerFingerprint(lease.Owner)) {
		t.Errorf("the output lacks the owner's fingerprint %s:\n%s", fence.OwnerFingerprint(lease.Owner), text)
	}
	ids := candidates(text, lease.Key, lease.Token, lease.TTL)
	if slices.Contains(ids, LeaseID(lease.Key, lease.Owner, lease.Token, lease.TTL)) {
		t.Fatalf("the output gives the lease id")
	}
	for _, id := range ids {
		if actsOn(ctx, t, c, lease.Key, id, false) || actsOn(ctx, t, c, lease.Key, id, true) {
			t.Fatalf("lease id %q, computed from the output, renewed or released the lease", id)
		}
	}
	for _, w := range slices.Compact(slices.Sorted(slices.Values(words.FindAllString(text, -1)))) {
		forged := fence.Lease{Key: lease.Key, Owner: strings.TrimPrefix(w, "owner:"), Token: lease.Token, TTL: lease.TTL, ValidUntil: time.Now().Add(lease.TTL)}
		if _, err := reader.Renew(ctx, forged); err == nil {
			t.Fatalf("a lease with owner %q from the output was renewed", forged.Owner)
		}
		if err := reader.Release(ctx, forged); err == nil {
			t.Fatalf("a lease with owner %q from the output was released", forged.Owner)
		}
	}
	t.Logf("%d lease ids and %d owner ids tried from %d bytes of output", len(ids), len(words.FindAllString(text, -1)), len(text))

	// The holder still holds it and can renew and release it.
	wantHeld(t, reader, lease)
	renewed, err := l.Renew(ctx, lease)
	if err != nil {
		t.Fatalf("the holder's Renew: %v", err)
	}
	if !actsOn(ctx, t, c, lease.Key, LeaseID(lease.Key, lease.Owner, lease.Token, lease.TTL), false) {
		t.Fatalf("the holder's lease id does not renew its lease")
	}
	if err := l.Release(ctx, renewed); err != nil {
		t.Fatalf("the holder's Release: %v", err)
	}

	// Control: the raw owner id, which a reader of Inspect's fields has,
	// gives both attacks.
	victim := mustAcquire(t, l, key(t), MinTTL, nil)
	info, err := reader.Inspect(ctx, victim.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !actsOn(ctx, t, c, victim.Key, LeaseID(victim.Key, info.Owner, info.Token, MinTTL), false) {
		t.Fatalf("the control failed: LeaseID of the raw owner id did not renew the lease")
	}
	forged := fence.Lease{Key: victim.Key, Owner: info.Owner, Token: info.Token, TTL: MinTTL, ValidUntil: time.Now().Add(MinTTL)}
	if err := reader.Release(ctx, forged); err != nil {
		t.Fatalf("the control failed: a lease forged from the raw owner id was not released: %v", err)
	}
}
