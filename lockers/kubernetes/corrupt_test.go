package kubernetes

import (
	"errors"
	"strings"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/kubetest"
)

// TestCorruptLeases edits a held Lease by hand in ways that break its
// rules: every method that reads it reports fence.ErrCorrupt and writes
// nothing over it.
func TestCorruptLeases(t *testing.T) {
	t.Parallel()
	client, cfg := adminClient(t)
	ns := kubetest.Namespace(t, cfg)
	l := newLocker(t, client, ns, nil, nil)
	for _, c := range []struct {
		name string
		edit func(*coordv1.Lease)
	}{
		{"TokenNotANumber", func(l *coordv1.Lease) { l.Annotations[annToken] = "12x" }},
		{"TokenZero", func(l *coordv1.Lease) { l.Annotations[annToken] = "0" }},
		{"TokenLeadingZero", func(l *coordv1.Lease) { l.Annotations[annToken] = "0" + l.Annotations[annToken] }},
		{"TokenTooBig", func(l *coordv1.Lease) { l.Annotations[annToken] = "18446744073709551616" }},
		{"OwnerWithoutToken", func(l *coordv1.Lease) { delete(l.Annotations, annToken) }},
		{"TokenWithoutOwner", func(l *coordv1.Lease) { delete(l.Annotations, annOwner) }},
		{"EmptyOwner", func(l *coordv1.Lease) { l.Annotations[annOwner] = "" }},
		{"HolderWithoutDuration", func(l *coordv1.Lease) { l.Spec.LeaseDurationSeconds = nil }},
		{"ValueTokenNotANumber", func(l *coordv1.Lease) { l.Annotations[annValueToken] = "x" }},
		{"ValueNotBase64", func(l *coordv1.Lease) {
			l.Annotations[annValueToken] = l.Annotations[annToken]
			l.Annotations[annValue] = "!!"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			key := "corrupt-" + strings.ToLower(c.name)
			lease, err := l.Acquire(ctx, key, time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			edited := getLease(t, client, ns, key)
			c.edit(edited)
			edited = updateLease(t, client, edited)
			if _, err := l.Inspect(ctx, key); !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Inspect: %v; want fence.ErrCorrupt", err)
			}
			if c.name == "ValueTokenNotANumber" || c.name == "ValueNotBase64" {
				return // only the value is broken: the lease goes on
			}
			if _, err := l.Acquire(ctx, key, time.Minute, nil); !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Acquire: %v; want fence.ErrCorrupt", err)
			}
			if _, err := l.Renew(ctx, lease); !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Renew: %v; want fence.ErrCorrupt", err)
			}
			if err := l.Release(ctx, lease); !errors.Is(err, fence.ErrCorrupt) {
				t.Errorf("Release: %v; want fence.ErrCorrupt", err)
			}
			if got := getLease(t, client, ns, key); got.ResourceVersion != edited.ResourceVersion {
				t.Errorf("the corrupt Lease was written over")
			}
		})
	}
}
