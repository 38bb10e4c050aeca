package kubernetes

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/netfault"
)

// TestHungServerCallsReturnWithTheirContext calls every method against
// a server that never answers: each returns once its ctx ends, with an
// error that says so.
func TestHungServerCallsReturnWithTheirContext(t *testing.T) {
	t.Parallel()
	client := clientFor(t, &rest.Config{Host: "http://" + netfault.Hung(t).Addr})
	l := newLocker(t, client, "hung", nil, nil)
	lease := fence.Lease{Key: "k", Owner: fence.NewOwnerID(), Token: 7, TTL: time.Minute, ValidUntil: time.Now().Add(time.Minute)}
	calls := map[string]func(ctx context.Context) error{
		"Acquire": func(ctx context.Context) error { _, err := l.Acquire(ctx, "k", time.Minute, nil); return err },
		"Renew":   func(ctx context.Context) error { _, err := l.Renew(ctx, lease); return err },
		"Release": func(ctx context.Context) error { return l.Release(ctx, lease) },
		"Publish": func(ctx context.Context) error { return l.Publish(ctx, lease, "v") },
		"Break":   func(ctx context.Context) error { return l.Break(ctx, "k") },
		"Inspect": func(ctx context.Context) error { _, err := l.Inspect(ctx, "k"); return err },
		"NotifyRelease": func(ctx context.Context) error {
			_, stop, err := driver.LockerOf(l.Locker).(driver.ReleaseNotifier).NotifyRelease(ctx, "k")
			if err == nil {
				stop()
			}
			return err
		},
	}
	netfault.ReturnWithContext(t, 200*time.Millisecond, calls)
}
