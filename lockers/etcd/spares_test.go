package etcd

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/fencekit/fence"
)

// countingClient connects to the shared server and counts the calls of
// each gRPC method made through it.
func countingClient(t *testing.T, grants *atomic.Int32) *clientv3.Client {
	t.Helper()
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == "/etcdserverpb.Lease/LeaseGrant" {
			grants.Add(1)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(sharedEndpoints(t), ","),
		DialTimeout: 5 * time.Second,
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(count)},
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestSpareLeasesAreReused: the etcd lease of a released lease, and that
// of an Acquire that found the key held, serve the Locker's next Acquire
// of the same TTL; each etcd lease holds one record at a time, and a key
// released stays free when its lease holds another.
func TestSpareLeasesAreReused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var grants atomic.Int32
	c := countingClient(t, &grants)
	l := newTestLocker(t, c, nil)
	other := newTestLocker(t, sharedClient(t), &Options{Prefix: l.d.prefix})

	first, err := l.Acquire(ctx, "k1", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := leaseOf(t, c, l, "k1")
	if err := l.Release(ctx, first); err != nil {
		t.Fatal(err)
	}
	second, err := l.Acquire(ctx, "k2", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := leaseOf(t, c, l, "k2"); got != id {
		t.Errorf("the second Acquire attached its record to lease %x, not to the spare %x", got, id)
	}
	ttl, err := c.TimeToLive(ctx, id, clientv3.WithAttachedKeys())
	if err != nil {
		t.Fatal(err)
	}
	if len(ttl.Keys) != 1 || string(ttl.Keys[0]) != l.d.held("k2") {
		t.Errorf("the reused lease holds %q; want only %q", ttl.Keys, l.d.held("k2"))
	}
	info, err := other.Inspect(ctx, "k1")
	if err != nil || info.Held || info.Token != first.Token {
		t.Errorf("Inspect(k1) after its release and the reuse of its lease = %+v, %v; want free with token %d", info, err, first.Token)
	}
	// An Acquire that finds the key held keeps its lease for the next.
	holder, err := other.Acquire(ctx, "k3", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "k3", time.Minute, nil); err == nil {
		t.Fatal("Acquire of a held key succeeded")
	}
	third, err := l.Acquire(ctx, "k4", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := grants.Load(); n != 2 {
		t.Errorf("%d leases granted for four Acquires of which the second and the fourth could reuse one; want 2", n)
	}
	for _, lease := range []fence.Lease{second, third} {
		if err := l.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Release(ctx, holder); err != nil {
		t.Fatal(err)
	}
}

// TestOldSpareIsNotReused: a spare with less than half its TTL surely
// left is dropped, and the Acquire grants a new lease, whose TTL the
// lease then has in full.
func TestOldSpareIsNotReused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var grants atomic.Int32
	c := countingClient(t, &grants)
	l := newTestLocker(t, c, nil)
	lease, err := l.Acquire(ctx, "k", DefaultMinTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	time.Sleep(DefaultMinTTL/2 + 100*time.Millisecond)
	lease, err = l.Acquire(ctx, "k", DefaultMinTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := grants.Load(); n != 2 {
		t.Errorf("%d leases granted; want 2 (the spare was too old to reuse)", n)
	}
	ttl, err := c.TimeToLive(ctx, leaseOf(t, c, l, "k"))
	if err != nil || ttl.GrantedTTL != 2 || ttl.TTL < 1 {
		t.Errorf("the new lease: %+v, %v; want 2 s granted, more than 1 s left", ttl, err)
	}
	if err := l.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
}

// leaseOf returns the etcd lease key's lock record is attached to.
func leaseOf(t *testing.T, c *clientv3.Client, l testLocker, key string) clientv3.LeaseID {
	t.Helper()
	resp, err := c.Get(t.Context(), l.d.held(key))
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("Get(%q) = %v, %v; want the lock record", l.d.held(key), resp, err)
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}
