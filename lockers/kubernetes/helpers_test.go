package kubernetes

import (
	"testing"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/testing/kubetest"
)

// adminClient returns a clientset of the test server's administrator.
func adminClient(t testing.TB) (*k8s.Clientset, *rest.Config) {
	t.Helper()
	cfg := kubetest.Config(t)
	return clientFor(t, cfg), cfg
}

// clientFor returns a clientset of cfg, without client-go's client-side
// rate limit.
func clientFor(t testing.TB, cfg *rest.Config) *k8s.Clientset {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	c, err := k8s.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("kubernetes.NewForConfig: %v", err)
	}
	return c
}

// testLocker is a Locker with the store under it.
type testLocker struct {
	*fence.Locker
	d *store
}

// newLocker returns a Locker on namespace through client, remembering
// what it sees in obs (nil: observations of its own).
func newLocker(t testing.TB, client Client, namespace string, opts *Options, obs *clockfree.Observations) *testLocker {
	t.Helper()
	d, err := newStore(client, namespace, opts, obs)
	if err != nil {
		t.Fatalf("New(%q): %v", namespace, err)
	}
	l, err := driver.NewLocker(d, &driver.LockerOptions{Clock: d.clock})
	if err != nil {
		t.Fatalf("New(%q): %v", namespace, err)
	}
	return &testLocker{Locker: l, d: d}
}

// getLease reads key's Lease as it is; nil if none.
func getLease(t testing.TB, c *k8s.Clientset, namespace, key string) *coordv1.Lease {
	t.Helper()
	name, _ := leaseName(key)
	l, err := c.CoordinationV1().Leases(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Lease %s: %v", name, err)
	}
	return l
}

// updateLease writes l as it is, bypassing the Locker: a Lease edited by
// hand.
func updateLease(t testing.TB, c *k8s.Clientset, l *coordv1.Lease) *coordv1.Lease {
	t.Helper()
	out, err := c.CoordinationV1().Leases(l.Namespace).Update(t.Context(), l, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update Lease %s: %v", l.Name, err)
	}
	return out
}
