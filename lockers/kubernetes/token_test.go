package kubernetes

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/kubetest"
)

// TestTokensSurviveDeletion deletes and recreates a key's Lease between
// acquisitions, by hand and with a client-go-shaped Lease in between: the
// next token is still higher than every one before, where
// leaseTransitions restarts.
func TestTokensSurviveDeletion(t *testing.T) {
	t.Parallel()
	client, cfg := adminClient(t)
	ns := kubetest.Namespace(t, cfg)
	l := newLocker(t, client, ns, nil, nil)
	ctx := t.Context()
	const key = "deleted-lease"
	var last fence.Token
	for round := range 4 {
		lease, err := l.Acquire(ctx, key, time.Minute, nil)
		if err != nil {
			t.Fatalf("round %d: Acquire: %v", round, err)
		}
		if lease.Token <= last {
			t.Fatalf("round %d: token %d after %d: not higher", round, lease.Token, last)
		}
		last = lease.Token
		if got := *getLease(t, client, ns, key).Spec.LeaseTransitions; got != 1 {
			t.Fatalf("round %d: leaseTransitions = %d on a fresh Lease; want 1 (so it is no token)", round, got)
		}
		if err := l.Release(ctx, lease); err != nil {
			t.Fatalf("round %d: Release: %v", round, err)
		}
		if err := client.CoordinationV1().Leases(ns).Delete(ctx, key, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("round %d: delete the Lease: %v", round, err)
		}
		info, err := l.Inspect(ctx, key)
		if err != nil || info.Held || info.Token != 0 {
			t.Fatalf("round %d: Inspect after deletion = %+v, %v; want a key never acquired", round, info, err)
		}
	}
}

// TestTokenIsTheReplacedResourceVersion checks the token's source: the
// resourceVersion the acquiring update replaced, kept in the annotation
// with the owner, and leaseTransitions advanced.
func TestTokenIsTheReplacedResourceVersion(t *testing.T) {
	t.Parallel()
	client, cfg := adminClient(t)
	ns := kubetest.Namespace(t, cfg)
	l := newLocker(t, client, ns, nil, nil)
	ctx := t.Context()
	const key = "token-source"
	first, err := l.Acquire(ctx, key, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, first); err != nil {
		t.Fatal(err)
	}
	before := getLease(t, client, ns, key)
	second, err := l.Acquire(ctx, key, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	after := getLease(t, client, ns, key)
	if second.Token.String() != before.ResourceVersion {
		t.Errorf("token %d; want the replaced resourceVersion %s", second.Token, before.ResourceVersion)
	}
	if after.Annotations[annToken] != second.Token.String() || after.Annotations[annOwner] != second.Owner || *after.Spec.HolderIdentity != second.Owner {
		t.Errorf("annotations %v, holder %q; want token %d and owner of the lease", after.Annotations, *after.Spec.HolderIdentity, second.Token)
	}
	if got, want := *after.Spec.LeaseTransitions, *before.Spec.LeaseTransitions+1; got != want {
		t.Errorf("leaseTransitions %d; want %d", got, want)
	}
	if got := *after.Spec.LeaseDurationSeconds; got != 60 {
		t.Errorf("leaseDurationSeconds %d; want 60", got)
	}
}

// TestTTLRoundsUp stores a TTL that is no whole number of seconds
// rounded up, and keeps the holder's own lease at the TTL asked.
func TestTTLRoundsUp(t *testing.T) {
	t.Parallel()
	client, cfg := adminClient(t)
	ns := kubetest.Namespace(t, cfg)
	l := newLocker(t, client, ns, nil, nil)
	sent := time.Now()
	lease, err := l.Acquire(t.Context(), "round-up", 2500*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := *getLease(t, client, ns, "round-up").Spec.LeaseDurationSeconds; got != 3 {
		t.Errorf("leaseDurationSeconds %d for a 2.5 s TTL; want 3", got)
	}
	if lease.ValidUntil.After(time.Now().Add(2500*time.Millisecond)) || lease.ValidUntil.Before(sent.Add(2500*time.Millisecond)) {
		t.Errorf("ValidUntil %v is not 2.5 s after the request", lease.ValidUntil)
	}
}

// TestNamespaceMissing: an Acquire in a namespace that does not exist
// gets an error matching fence.ErrStoreMissing; Inspect shows the key
// free (the API server answers a read there as for any missing Lease).
func TestNamespaceMissing(t *testing.T) {
	t.Parallel()
	client, _ := adminClient(t)
	l := newLocker(t, client, "fence-no-such-namespace", nil, nil)
	if _, err := l.Acquire(t.Context(), "k", time.Minute, nil); !errors.Is(err, fence.ErrStoreMissing) {
		t.Fatalf("Acquire in a missing namespace: %v; want fence.ErrStoreMissing", err)
	}
	if info, err := l.Inspect(t.Context(), "k"); err != nil || info.Held {
		t.Fatalf("Inspect in a missing namespace = %+v, %v; want a free key", info, err)
	}
}
