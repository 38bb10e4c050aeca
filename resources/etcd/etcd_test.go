package etcd

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	prefix := uniquePrefix("conformance")
	resourcetest.Run(t, resourcetest.Harness{
		New:       func(t *testing.T) *fence.Resource { return testResource(t, c, prefix) },
		MaxKeyLen: MaxKeyLen,
		// Each resource loses the answer of its first transaction, on a
		// client of its own: the server applies it, and the client hears
		// codes.Unavailable.
		LostAnswer: func(t *testing.T, after func()) *fence.Resource {
			lc := newClient(t, grpc.WithChainUnaryInterceptor(losingFirstTxn(after)))
			return testResource(t, lc, prefix)
		},
	})
}

// TestAs: As gives the client New was given, and nothing else.
func TestAs(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	r := testResource(t, c, uniquePrefix("as"))
	var got *clientv3.Client
	if !r.As(&got) || got != c {
		t.Errorf("As(**clientv3.Client) = %p; want the client New was given, %p", got, c)
	}
	var kv clientv3.KV
	if r.As(&kv) {
		t.Errorf("As(*clientv3.KV) = true; want false")
	}
}
