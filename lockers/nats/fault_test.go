package nats

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/netfault"
)

// callTimeout is the context of each call; margin is how much later than
// its deadline a call may return on a loaded machine.
const (
	callTimeout = time.Second
	margin      = 1500 * time.Millisecond
)

// within calls f with a context of callTimeout and fails t unless f
// returns an error matching context.DeadlineExceeded within callTimeout
// and margin.
func within(t *testing.T, what string, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	elapsed := time.Since(start)
	switch {
	case err == nil:
		t.Errorf("%s succeeded against a server that never answers", what)
	case elapsed > callTimeout+margin:
		t.Errorf("%s returned %v after it started, its context allowed %v: %v", what, elapsed.Round(time.Millisecond), callTimeout, err)
	case !errors.Is(err, context.DeadlineExceeded):
		t.Errorf("%s: %v; want an error matching context.DeadlineExceeded", what, err)
	}
}

// TestPausedServerHonoursContext: with the server stopped by SIGSTOP (its
// sockets accept and nothing answers), every call of a Locker that was
// bound to the bucket, and of one that was not, returns when its context
// ends.
func TestPausedServerHonoursContext(t *testing.T) {
	t.Parallel()
	s := startServer(t, "paused", serverConfig{})
	_, js := connect(t, s.url)
	bucket := newBucket(t, js, "paused", 1)
	bound := newTestLocker(t, js, bucket, nil, nil)
	lease, err := bound.Acquire(t.Context(), "held", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	unbound := newTestLocker(t, js, bucket, nil, nil)
	s.Pause()
	t.Cleanup(s.Resume)
	for name, l := range map[string]testLocker{"bound": bound, "unbound": unbound} {
		within(t, name+" Acquire", func(ctx context.Context) error { _, err := l.Acquire(ctx, "k", time.Minute, nil); return err })
		within(t, name+" Inspect", func(ctx context.Context) error { _, err := l.Inspect(ctx, "k"); return err })
		within(t, name+" Break", func(ctx context.Context) error { return l.Break(ctx, "k") })
		within(t, name+" Renew", func(ctx context.Context) error { _, err := l.Renew(ctx, lease); return err })
		within(t, name+" Release", func(ctx context.Context) error { return l.Release(ctx, lease) })
		within(t, name+" Publish", func(ctx context.Context) error { return l.Publish(ctx, lease, "v") })
		within(t, name+" Create", func(ctx context.Context) error { return l.Create(ctx) })
		within(t, name+" NotifyRelease", func(ctx context.Context) error {
			_, stop, err := l.d.NotifyRelease(ctx, "k")
			if err == nil {
				stop()
			}
			return err
		})
	}
}

// TestOpenHonoursContext: the URL opener, at a server that accepts and
// never answers, returns when its context ends.
func TestOpenHonoursContext(t *testing.T) {
	t.Parallel()
	hung := netfault.Hung(t)
	within(t, "OpenLocker", func(ctx context.Context) error {
		l, err := fence.OpenLocker(ctx, "nats://"+hung.Addr+"?bucket=b&dial-timeout=30s", nil)
		if err == nil {
			_ = l.Close()
		}
		return err
	})
}

// TestMissingBucket: every call on a bucket that does not exist, or that
// was deleted after the Locker bound it, gets fence.ErrStoreMissing, and
// Create makes it.
func TestMissingBucket(t *testing.T) {
	t.Parallel()
	_, js := connect(t, sharedURL(t))
	bucket := uniqueBucket("missing")
	l := newTestLocker(t, js, bucket, nil, nil)
	lease := fence.Lease{Key: "k", Owner: "o", Token: 1, TTL: time.Minute, ValidUntil: time.Now().Add(time.Minute)}
	check := func(when string) {
		t.Helper()
		if _, err := l.Acquire(t.Context(), "k", time.Minute, nil); !errors.Is(err, fence.ErrStoreMissing) {
			t.Errorf("%s: Acquire: %v; want fence.ErrStoreMissing", when, err)
		}
		if _, err := l.Inspect(t.Context(), "k"); !errors.Is(err, fence.ErrStoreMissing) {
			t.Errorf("%s: Inspect: %v; want fence.ErrStoreMissing", when, err)
		}
		if err := l.Break(t.Context(), "k"); !errors.Is(err, fence.ErrStoreMissing) {
			t.Errorf("%s: Break: %v; want fence.ErrStoreMissing", when, err)
		}
		if err := l.d.Renew(t.Context(), lease); !errors.Is(err, fence.ErrStoreMissing) {
			t.Errorf("%s: driver Renew: %v; want fence.ErrStoreMissing", when, err)
		}
	}
	check("before Create")
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { _ = js.DeleteKeyValue(context.Background(), bucket) })
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create of a bucket that exists: %v", err)
	}
	if _, err := l.Acquire(t.Context(), "k", time.Minute, nil); err != nil {
		t.Fatalf("Acquire after Create: %v", err)
	}
	if err := js.DeleteKeyValue(t.Context(), bucket); err != nil {
		t.Fatal(err)
	}
	check("after the bucket was deleted")
}

// TestBucketWithTTLIsRefused: a bucket whose entries expire would lose
// held records; the Locker refuses it.
func TestBucketWithTTLIsRefused(t *testing.T) {
	t.Parallel()
	_, js := connect(t, sharedURL(t))
	bucket := uniqueBucket("ttl")
	if _, err := js.CreateKeyValue(t.Context(), kvConfig(bucket, time.Hour)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = js.DeleteKeyValue(context.Background(), bucket) })
	l := newTestLocker(t, js, bucket, nil, nil)
	if _, err := l.Acquire(t.Context(), "k", time.Minute, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("Acquire on a bucket with a TTL: %v; want fence.ErrInvalid", err)
	}
}

func kvConfig(bucket string, ttl time.Duration) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: bucket, TTL: ttl}
}
