package kubernetes

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/kubetest"
)

// similarKeys are keys that differ only in what a careless mapping to
// Lease names would drop or fold.
var similarKeys = []string{
	"a", "A", "a_", "a-", "a.", "a.b", "a-b", "a_b", "a/b", "a b", "é", "e",
	hashedPrefix + "a", hashedPrefix + "A",
	strings.Repeat("b", 253), strings.Repeat("b", 254), strings.Repeat("b", 253) + "B",
}

func TestLeaseNames(t *testing.T) {
	t.Parallel()
	names := map[string]string{}
	for _, key := range similarKeys {
		name, hashed := leaseName(key)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("leaseName(%q) = %q, no Lease name: %v", key, name, errs)
		}
		if readable := !hashed; readable != (name == key) {
			t.Errorf("leaseName(%q) = %q, hashed %v", key, name, hashed)
		}
		if hashed != !(len(validation.IsDNS1123Subdomain(key)) == 0 && !strings.HasPrefix(key, hashedPrefix)) {
			t.Errorf("leaseName(%q): hashed = %v", key, hashed)
		}
		if other, dup := names[name]; dup {
			t.Errorf("keys %q and %q share Lease %q", other, key, name)
		}
		names[name] = key
	}
}

// TestSimilarKeysNeverShare takes every similar key at once: each gets
// a Lease of its own.
func TestSimilarKeysNeverShare(t *testing.T) {
	t.Parallel()
	client, cfg := adminClient(t)
	ns := kubetest.Namespace(t, cfg)
	l := newLocker(t, client, ns, nil, nil)
	ctx := t.Context()
	for _, key := range similarKeys {
		lease, err := l.Acquire(ctx, key, time.Minute, nil)
		if err != nil {
			t.Fatalf("Acquire(%q): %v", key, err)
		}
		info, err := l.Inspect(ctx, key)
		if err != nil || !info.Held || info.Owner != lease.Owner {
			t.Fatalf("Inspect(%q) = %+v, %v; want held by its own lease", key, info, err)
		}
	}
	// A hashed Lease that names another key is refused, not shared.
	name, _ := leaseName("A")
	lease := getLease(t, client, ns, "A")
	lease.Annotations[annKey] = "B"
	updateLease(t, client, lease)
	if _, err := l.Inspect(ctx, "A"); !errors.Is(err, fence.ErrCorrupt) {
		t.Fatalf("Inspect of Lease %s naming another key: %v; want fence.ErrCorrupt", name, err)
	}
}
