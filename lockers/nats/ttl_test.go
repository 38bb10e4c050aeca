package nats

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestPerKeyTTLIsNoLease shows why the locker keeps no per-key TTL: on a
// bucket that allows them, a TTL is given by Create only (kv.Update takes
// none), and the Update's new revision, a message of its own, carries
// none: a key created with a TTL expires, but once updated it never does.
// A lease renewed by Update would outlive a crashed holder for ever.
func TestPerKeyTTLIsNoLease(t *testing.T) {
	t.Parallel()
	_, js := connect(t, sharedURL(t))
	bucket := uniqueBucket("ttl")
	kv, err := js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: bucket, LimitMarkerTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = js.DeleteKeyValue(context.Background(), bucket) })
	const ttl = time.Second
	rev, err := kv.Create(t.Context(), "created", []byte("x"), jetstream.KeyTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	renewed, err := kv.Create(t.Context(), "renewed", []byte("x"), jetstream.KeyTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Update(t.Context(), "renewed", []byte("y"), renewed); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * ttl) // the server removes expired messages within about a second
	_, err = kv.Get(t.Context(), "created")
	if !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("a key created with a TTL of %v, %v later: Get = %v; want it expired", ttl, 3*ttl, err)
	}
	e, err := kv.Get(t.Context(), "renewed")
	t.Logf("a key created with a TTL (revision %d) and updated: after %v Get = %v, %v", rev, 3*ttl, e, err)
	if err != nil {
		t.Fatalf("the updated key expired with the TTL of its first revision (%v); this test expected the update to drop the TTL", err)
	}
}
