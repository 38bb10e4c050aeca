// Package valuetest holds the checks of published values (fence.Locker
// Publish and LockInfo.Value) that a locker package's own tests share,
// where the conformance suite cannot reach: a value record spoiled by
// hand in the store.
package valuetest

import (
	"errors"
	"testing"

	"github.com/fencekit/fence"
)

// CorruptValue checks the key of lease, held on l, after the test has
// spoiled its value record in the store: Inspect fails with a
// *fence.CorruptError that matches fence.ErrCorrupt; the lease goes on
// (Renew succeeds); Publish writes over the record, after which Inspect
// shows the new value; and Release succeeds.
func CorruptValue(t *testing.T, l *fence.Locker, lease fence.Lease) {
	t.Helper()
	ctx := t.Context()
	_, err := l.Inspect(ctx, lease.Key)
	if _, ok := errors.AsType[*fence.CorruptError](err); !ok || !errors.Is(err, fence.ErrCorrupt) {
		t.Fatalf("Inspect of %q with a corrupt value record: %v; want a *fence.CorruptError matching fence.ErrCorrupt", lease.Key, err)
	}
	if _, err := l.Renew(ctx, lease); err != nil {
		t.Fatalf("Renew with a corrupt value record: %v", err)
	}
	if err := l.Publish(ctx, lease, "v"); err != nil {
		t.Fatalf("Publish over a corrupt value record: %v", err)
	}
	if info, err := l.Inspect(ctx, lease.Key); err != nil || info.Value != "v" {
		t.Fatalf("Inspect after Publish = %+v, %v; want value v", info, err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release: %v", err)
	}
}
