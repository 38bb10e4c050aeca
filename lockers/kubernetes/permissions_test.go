package kubernetes

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/kubetest"
)

// rules returns the RBAC rules of the package doc with verbs.
func rules(verbs []string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: verbs}}
}

// TestPermissions runs the basic flow as a user granted exactly the
// rules of the package doc, and shows that each verb fewer makes a call
// fail with an error naming the verb.
func TestPermissions(t *testing.T) {
	t.Parallel()
	_, admin := adminClient(t)
	user := kubetest.UserConfig(t)
	t.Run("Exactly", func(t *testing.T) {
		t.Parallel()
		ns := kubetest.Namespace(t, admin)
		kubetest.Grant(t, admin, ns, rules(Verbs))
		l := newLocker(t, clientFor(t, user), ns, nil, nil)
		basicFlow(t, l)
	})
	for _, missing := range Verbs {
		t.Run("Without_"+missing, func(t *testing.T) {
			t.Parallel()
			ns := kubetest.Namespace(t, admin)
			verbs := slices.DeleteFunc(slices.Clone(Verbs), func(v string) bool { return v == missing })
			kubetest.Grant(t, admin, ns, rules(verbs))
			l := newLocker(t, clientFor(t, user), ns, nil, nil)
			err := failingCall(t, l, missing)
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "needs RBAC permission to "+missing+" leases") {
				t.Fatalf("without %q: %v; want a 403 naming the verb", missing, err)
			}
			t.Logf("without %q: %v", missing, err)
		})
	}
}

// basicFlow takes, renews, publishes, inspects, waits for and releases
// a key with l.
func basicFlow(t *testing.T, l *testLocker) {
	t.Helper()
	ctx := t.Context()
	s, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	h, err := s.Lock(ctx, "basic", nil)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if err := h.Publish(ctx, "addr"); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if info, err := l.Inspect(ctx, "basic"); err != nil || info.Value != "addr" {
		t.Fatalf("Inspect = %+v, %v", info, err)
	}
	// A second session waits (list and watch) and gets the key on the
	// release.
	s2, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close(ctx)
	got := make(chan error, 1)
	go func() {
		h2, err := s2.Lock(ctx, "basic", &fence.LockOptions{Wait: fence.WaitForever})
		if err == nil {
			err = h2.Release(ctx)
		}
		got <- err
	}()
	_, stop, err := l.d.NotifyRelease(ctx, "basic")
	if err != nil {
		t.Fatalf("NotifyRelease: %v", err)
	}
	stop()
	if err := h.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the waiting Lock: %v", err)
	}
	if err := l.Break(ctx, "basic"); err != nil {
		t.Fatalf("Break: %v", err)
	}
}

// failingCall makes the call of l that needs verb, and returns its
// error.
func failingCall(t *testing.T, l *testLocker, verb string) error {
	t.Helper()
	ctx := t.Context()
	var err error
	switch verb {
	case "get", "create", "update":
		_, err = l.Acquire(ctx, "denied", time.Minute, nil)
	case "list", "watch":
		var stop func()
		if _, stop, err = l.d.NotifyRelease(ctx, "denied"); err == nil {
			stop()
		}
	}
	if err == nil {
		t.Fatalf("without %q: no error", verb)
	}
	if errors.Is(err, fence.ErrCorrupt) {
		t.Fatalf("without %q: %v", verb, err)
	}
	return err
}
