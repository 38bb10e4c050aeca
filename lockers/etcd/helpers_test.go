package etcd

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/testproc"
)

// newClient connects to endpoints (comma-separated) and closes the client
// when the test ends.
func newClient(t testing.TB, endpoints string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(endpoints, ","),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("connect to etcd at %s: %v", endpoints, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// sharedClient connects to the test etcd member that scripts/test.sh
// started, which other tests share.
func sharedClient(t testing.TB) *clientv3.Client {
	t.Helper()
	return newClient(t, testenv.EtcdEndpoints(t))
}

// uniquePrefix returns a prefix of etcd keys no other test run uses.
func uniquePrefix(tag string) string {
	return fmt.Sprintf("fence-test/%s/%s/", tag, strings.ToLower(rand.Text()[:10]))
}

// testLocker is a Locker of the tests, with the store under it.
type testLocker struct {
	*fence.Locker
	d *store
}

// newTestLocker returns a Locker on c under a prefix of its own (unless
// opts names one).
func newTestLocker(t testing.TB, c *clientv3.Client, opts *Options) testLocker {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = uniquePrefix("locker")
	}
	l, d, err := newLocker(c, &o, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return testLocker{Locker: l, d: d}
}

// member is an etcd member a test started, with its flags.
type member struct {
	name       string
	clientURL  string
	peerURL    string
	proc       *testproc.Proc
	clientAddr string // HOST:PORT
}

// Timing flags of the servers the tests start: short, so that a cluster
// elects a leader quickly and grants leases of 1 s (1.5 election timeouts
// rounded up to a second).
const (
	heartbeatMillis = "50"
	electionMillis  = "500"
)

// startCluster starts n etcd members on loopback, as one cluster, and
// waits until it takes writes. Each member keeps its data in a directory
// of the test, so that a member killed and restarted keeps what it had.
func startCluster(t testing.TB, n int) []*member {
	t.Helper()
	return startClusterElection(t, n, electionMillis)
}

// startClusterElection is startCluster with an election timeout of
// election milliseconds.
func startClusterElection(t testing.TB, n int, election string) []*member {
	t.Helper()
	bin := testenv.EtcdServer(t)
	ms := make([]*member, n)
	var initial []string
	for i := range ms {
		m := &member{name: fmt.Sprintf("m%d", i)}
		m.clientAddr = fmt.Sprintf("127.0.0.1:%d", testproc.FreePort(t))
		m.clientURL = "http://" + m.clientAddr
		m.peerURL = fmt.Sprintf("http://127.0.0.1:%d", testproc.FreePort(t))
		ms[i] = m
		initial = append(initial, m.name+"="+m.peerURL)
	}
	for _, m := range ms {
		m.proc = testproc.Start(t, "etcd-"+m.name, bin,
			"--name", m.name,
			"--data-dir", t.TempDir(),
			"--log-level", "warn",
			"--listen-client-urls", m.clientURL,
			"--advertise-client-urls", m.clientURL,
			"--listen-peer-urls", m.peerURL,
			"--initial-advertise-peer-urls", m.peerURL,
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new",
			"--initial-cluster-token", "fence-test",
			"--heartbeat-interval", heartbeatMillis,
			"--election-timeout", election,
		)
	}
	waitWritable(t, endpointsOf(ms))
	return ms
}

// endpointsOf returns the client endpoints of ms, comma-separated.
func endpointsOf(ms []*member) string {
	var eps []string
	for _, m := range ms {
		eps = append(eps, m.clientAddr)
	}
	return strings.Join(eps, ",")
}

// waitWritable waits until a write through endpoints succeeds.
func waitWritable(t testing.TB, endpoints string) {
	t.Helper()
	c := newClient(t, endpoints)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Put(ctx, "fence-test/ready", "1")
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd at %s takes no writes after 20 s: %v", endpoints, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sharedEndpoints returns the endpoint of the shared test server.
func sharedEndpoints(t testing.TB) string {
	t.Helper()
	return testenv.EtcdEndpoints(t)
}
