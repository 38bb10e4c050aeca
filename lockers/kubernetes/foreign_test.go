package kubernetes

import (
	"errors"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/testing/kubetest"
)

// TestForeignHolder writes a Lease as a client-go elector does, with a
// renewTime far in the past: a Locker reports it held by that holder and
// takes it over only once it has seen the Lease unchanged for its
// leaseDurationSeconds on its own clock, whatever renewTime says; a
// renewal (a new resourceVersion) restarts the wait.
func TestForeignHolder(t *testing.T) {
	t.Parallel()
	client, cfg := adminClient(t)
	ns := kubetest.Namespace(t, cfg)
	clock := clocktest.New(time.Now())
	l := newLocker(t, client, ns, &Options{Clock: clock}, nil)
	ctx := t.Context()
	holder, secs, long := "client-go-elector", int32(15), metav1.NewMicroTime(time.Now().Add(-time.Hour))
	lease, err := client.CoordinationV1().Leases(ns).Create(ctx, &coordv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "foreign"},
		Spec:       coordv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &long, RenewTime: &long},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := l.Inspect(ctx, "foreign")
	if err != nil || !info.Held || info.Owner != "" || info.Token != 0 {
		t.Fatalf("Inspect of a Lease only client-go held = %+v, %v; want held, no owner, no token", info, err)
	}
	var held *fence.HeldError
	if _, err := l.Acquire(ctx, "foreign", time.Minute, nil); !errors.As(err, &held) || held.Owner != holder || held.Token != 0 {
		t.Fatalf("Acquire: %v; want a *fence.HeldError naming %q without a token", err, holder)
	}
	clock.Advance(14 * time.Second)
	// The holder renews: a new resourceVersion, seen anew.
	renewed := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	lease.Spec.RenewTime = &renewed
	updateLease(t, client, lease)
	clock.Advance(2 * time.Second)
	if _, err := l.Acquire(ctx, "foreign", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Acquire 16 s after the first look, 2 s after a renewal: %v; want fence.ErrHeld", err)
	}
	clock.Advance(15 * time.Second)
	mine, err := l.Acquire(ctx, "foreign", time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire after 15 s of an unchanged Lease: %v", err)
	}
	// client-go takes it back (keeping the annotations, as LeaseLock
	// does): the Locker reports the holder with the last token it gave.
	back := getLease(t, client, ns, "foreign")
	back.Spec.HolderIdentity = &holder
	updateLease(t, client, back)
	info, err = l.Inspect(ctx, "foreign")
	if err != nil || !info.Held || info.Owner != holder || info.Token != mine.Token {
		t.Fatalf("Inspect after client-go took the Lease back = %+v, %v; want held by %q with token %d", info, err, holder, mine.Token)
	}
	if _, err := l.Renew(ctx, mine); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew of the lease client-go took: %v; want fence.ErrNotHeld", err)
	}
}
