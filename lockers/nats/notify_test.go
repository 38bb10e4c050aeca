package nats

import (
	"context"
	"testing"
	"time"

	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/clockfree"
)

// TestNotifyRelease: a watch of a key wakes its waiter when another
// Locker releases the key, breaks it, takes it over or publishes, and
// when the held record has stayed unchanged for its lease on the
// watcher's clock; a renewal wakes nobody.
func TestNotifyRelease(t *testing.T) {
	t.Parallel()
	_, js := connect(t, sharedURL(t))
	bucket := newBucket(t, js, "notify", 1)
	clock := clocktest.New(time.Now())
	holder := newTestLocker(t, js, bucket, &Options{Clock: clock}, nil)
	watcher := newTestLocker(t, js, bucket, &Options{Clock: clock}, clockfree.NewObservations())
	const ttl = 10 * time.Second
	lease, err := holder.Acquire(t.Context(), "k", ttl, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, stop, err := watcher.d.NotifyRelease(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	woken := func(what string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			t.Fatalf("no notification 10 s after %s", what)
		}
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case <-c:
			t.Fatalf("a notification after %s", what)
		case <-time.After(300 * time.Millisecond):
		}
	}
	quiet("the watch started on a held key")
	if lease, err = holder.Renew(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	quiet("a renewal")
	if err := holder.Publish(t.Context(), lease, "addr"); err != nil {
		t.Fatal(err)
	}
	woken("a Publish")
	if err := holder.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	woken("a Release")
	if lease, err = holder.Acquire(t.Context(), "k", ttl, nil); err != nil {
		t.Fatal(err)
	}
	woken("an Acquire of the free key (another lease)")
	if err := watcher.Break(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	woken("a Break")
	if lease, err = holder.Acquire(t.Context(), "k", ttl, nil); err != nil {
		t.Fatal(err)
	}
	woken("an Acquire after the Break")
	// The watcher saw the record when the watch delivered it; a full
	// lease later on its clock, it may take the key over.
	quiet("an Acquire (twice)")
	if err := clock.WaitTimers(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(ttl)
	woken("the lease ran out on the watcher's clock")
	if _, err := watcher.Acquire(t.Context(), "k", ttl, nil); err != nil {
		t.Fatalf("Acquire after the watch saw the lease run out: %v", err)
	}
	woken("a takeover")
}

// TestNotifyReleaseOutlivesItsContext: the watch lasts until stop, not
// until the context NotifyRelease was called with ends (nats.go ends a
// watch with the context it was made with), and it wakes its waiter when
// a key that had no entry when it began is taken.
func TestNotifyReleaseOutlivesItsContext(t *testing.T) {
	t.Parallel()
	_, js := connect(t, sharedURL(t))
	bucket := newBucket(t, js, "notify-ctx", 1)
	holder := newTestLocker(t, js, bucket, nil, nil)
	watcher := newTestLocker(t, js, bucket, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	c, stop, err := watcher.d.NotifyRelease(ctx, "k")
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	time.Sleep(100 * time.Millisecond) // nats.go's unsubscribe on the context's end, were it to come
	woken := func(what string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			t.Fatalf("no notification 10 s after %s", what)
		}
	}
	lease, err := holder.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	woken("the first Acquire of a key that had no entry")
	if err := holder.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	woken("a Release after the context of NotifyRelease ended")
}
