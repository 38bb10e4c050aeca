package etcd

import (
	"testing"

	"google.golang.org/grpc"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	prefix := uniquePrefix("conformance")
	resourcetest.Run(t, resourcetest.Harness{
		New:       func(t *testing.T) fence.Resource { return newResource(t, c, prefix) },
		MaxKeyLen: MaxKeyLen,
		// Each resource loses the answer of its first transaction, on a
		// client of its own: the server applies it, and the client hears
		// codes.Unavailable.
		LostAnswer: func(t *testing.T, after func()) fence.Resource {
			lc := newClient(t, grpc.WithChainUnaryInterceptor(losingFirstTxn(after)))
			return newResource(t, lc, prefix)
		},
	})
}
