package nats

import (
	"context"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestTokensSurvivePurgesAndRestart: the token is the revision of the
// acquiring write, and the bucket's stream keeps its last sequence when a
// key is deleted or purged by hand, when the whole stream is purged, and
// when the server is killed with SIGKILL and restarted on an empty
// stream: every next token is higher.
func TestTokensSurvivePurgesAndRestart(t *testing.T) {
	t.Parallel()
	s := startServer(t, "tokens", serverConfig{})
	_, js := connect(t, s.url)
	bucket := newBucket(t, js, "tokens", 1)
	const key = "jobs/k"
	var last fence.Token
	take := func(after string) {
		t.Helper()
		// A Locker of its own each time: it knows nothing of the key.
		_, js := connect(t, s.url)
		l := newTestLocker(t, js, bucket, nil, nil)
		var lease fence.Lease
		if err := retry(30*time.Second, func(ctx context.Context) error {
			var err error
			lease, err = l.Acquire(ctx, key, time.Minute, nil)
			return err
		}); err != nil {
			t.Fatalf("Acquire after %s: %v", after, err)
		}
		if lease.Token <= last {
			t.Fatalf("after %s: token %d, not above the last one, %d", after, lease.Token, last)
		}
		t.Logf("after %s: token %d", after, lease.Token)
		last = lease.Token
		if err := l.Release(t.Context(), lease); err != nil {
			t.Fatal(err)
		}
	}
	kv, err := js.KeyValue(t.Context(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(t.Context(), "KV_"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	take("nothing")
	if err := kv.Delete(t.Context(), keyName(key)); err != nil {
		t.Fatal(err)
	}
	take("a delete of the key by hand")
	if err := kv.Purge(t.Context(), keyName(key)); err != nil {
		t.Fatal(err)
	}
	take("a purge of the key by hand")
	if err := stream.Purge(t.Context()); err != nil {
		t.Fatal(err)
	}
	take("a purge of the whole stream")
	if err := stream.Purge(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	s.restart(t)
	take("a purge of the whole stream and a restart of the server")
}
