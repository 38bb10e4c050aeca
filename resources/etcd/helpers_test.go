package etcd

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// newClient connects to the shared test etcd member with extra dial
// options, and closes the client when the test ends.
func newClient(t testing.TB, dial ...grpc.DialOption) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(testenv.EtcdEndpoints(t), ","),
		DialTimeout: 5 * time.Second,
		DialOptions: dial,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("connect to etcd: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// uniquePrefix returns a prefix of etcd keys no other test run uses.
func uniquePrefix(tag string) string {
	return fmt.Sprintf("fence-test/%s/%s/", tag, strings.ToLower(rand.Text()[:10]))
}

// testResource returns a resource on c under prefix.
func testResource(t testing.TB, c *clientv3.Client, prefix string) *fence.Resource {
	t.Helper()
	r, err := New(c, &Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// losingFirstTxn is a gRPC interceptor that lets the first transaction
// through to the server, calls after once the server has answered, and
// loses that answer: the caller gets codes.Unavailable, as when the
// connection drops after the request was sent. Later calls pass
// untouched.
func losingFirstTxn(after func()) grpc.UnaryClientInterceptor {
	var fired atomic.Bool
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if method != "/etcdserverpb.KV/Txn" || err != nil || !fired.CompareAndSwap(false, true) {
			return err
		}
		after()
		return status.Error(codes.Unavailable, "the test lost the answer")
	}
}
