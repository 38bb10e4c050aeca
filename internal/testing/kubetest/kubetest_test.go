package kubetest_test

import (
	"strconv"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/utils/ptr"

	"github.com/fencekit/fence/internal/testing/kubetest"
)

func newLease(name, holder string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(holder),
			LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime:            &metav1.MicroTime{Time: time.Now()},
		},
	}
}

// An update carrying a resourceVersion that is no longer the object's is
// refused with 409 Conflict and changes nothing: the compare-and-swap a
// Lease locker stands on. A fake clientset would apply it.
func TestStaleUpdateConflicts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := kubetest.Config(t)
	leases := kubetest.Clientset(t, cfg).CoordinationV1().Leases(kubetest.Namespace(t, cfg))

	created, err := leases.Create(ctx, newLease("stale", "a"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fresh := created.DeepCopy()
	fresh.Spec.HolderIdentity = ptr.To("b")
	if _, err := leases.Update(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update at the current resourceVersion: %v", err)
	}

	stale := created.DeepCopy()
	stale.Spec.HolderIdentity = ptr.To("c")
	_, err = leases.Update(ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("update at a stale resourceVersion %s: got %v, want 409 Conflict", created.ResourceVersion, err)
	}
	got, err := leases.Get(ctx, "stale", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := ptr.Deref(got.Spec.HolderIdentity, ""); h != "b" {
		t.Errorf("holder after the refused update = %q, want b", h)
	}

	// A create of a name that exists is refused too, with 409 AlreadyExists.
	if _, err := leases.Create(ctx, newLease("stale", "d"), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("create of an existing Lease: got %v, want 409 AlreadyExists", err)
	}
}

// The resourceVersions of successive writes of Leases, to one object and
// to others, are integers that increase, and resourceversion.Compare
// orders them as the integers.
func TestResourceVersionsIncrease(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := kubetest.Config(t)
	leases := kubetest.Clientset(t, cfg).CoordinationV1().Leases(kubetest.Namespace(t, cfg))

	var versions []string
	lease, err := leases.Create(ctx, newLease("counted", "a"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions = append(versions, lease.ResourceVersion)
	for i := range 5 {
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		lease.Spec.LeaseTransitions = ptr.To(int32(i + 1))
		if lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, lease.ResourceVersion)
		other, err := leases.Create(ctx, newLease("other-"+strconv.Itoa(i), "b"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, other.ResourceVersion)
	}

	prev := uint64(0)
	for i, v := range versions {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("write %d: resourceVersion %q is not an integer: %v", i, v, err)
		}
		if n <= prev {
			t.Errorf("write %d: resourceVersion %d does not follow %d", i, n, prev)
		}
		prev = n
		if i == 0 {
			continue
		}
		c, err := resourceversion.CompareResourceVersion(versions[i-1], v)
		if err != nil || c != -1 {
			t.Errorf("CompareResourceVersion(%s, %s) = %d, %v; want -1", versions[i-1], v, c, err)
		}
	}
}

// fence-user may do nothing in a namespace until Grant gives it a Role,
// and then exactly what the Role says.
func TestGrant(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := kubetest.Config(t)
	ns := kubetest.Namespace(t, cfg)
	if _, err := kubetest.Clientset(t, cfg).CoordinationV1().Leases(ns).Create(ctx, newLease("granted", "a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	user := kubetest.Clientset(t, kubetest.UserConfig(t)).CoordinationV1().Leases(ns)

	if _, err := user.Get(ctx, "granted", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("get before the grant: got %v, want 403 Forbidden", err)
	}
	kubetest.Grant(t, cfg, ns, []rbacv1.PolicyRule{{
		APIGroups: []string{coordinationv1.GroupName},
		Resources: []string{"leases"},
		Verbs:     []string{"get", "update"},
	}})
	lease, err := user.Get(ctx, "granted", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after the grant: %v", err)
	}
	lease.Spec.HolderIdentity = ptr.To(kubetest.UserName)
	if _, err := user.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update after the grant: %v", err)
	}
	if err := user.Delete(ctx, "granted", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete, which the grant leaves out: got %v, want 403 Forbidden", err)
	}
	if _, err := kubetest.Clientset(t, kubetest.UserConfig(t)).CoordinationV1().Leases("default").
		Get(ctx, "granted", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("get in another namespace: got %v, want 403 Forbidden", err)
	}
}
