package nats

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/testproc"
)

// sharedURL returns the URL of the shared test server (scripts/nats.sh:
// JetStream on, sync_interval: always).
func sharedURL(t testing.TB) string {
	t.Helper()
	return testenv.Endpoint(t, "FENCE_NATS_URL", "nats-server (JetStream)")
}

// serverBin returns the nats-server binary, for tests that start servers
// of their own.
func serverBin(t testing.TB) string {
	t.Helper()
	return testenv.Endpoint(t, "FENCE_NATS_BIN", "nats-server (its binary)")
}

// connect connects to servers (a comma-separated list of nats:// URLs)
// and returns the connection and its JetStream; the connection is closed
// when the test ends.
func connect(t testing.TB, servers string, opts ...natsgo.Option) (*natsgo.Conn, jetstream.JetStream) {
	t.Helper()
	opts = append([]natsgo.Option{natsgo.Name("fence-test"), natsgo.MaxReconnects(-1), natsgo.ReconnectWait(100 * time.Millisecond)}, opts...)
	nc, err := natsgo.Connect(servers, opts...)
	if err != nil {
		t.Fatalf("connect to %s: %v", servers, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// uniqueBucket returns a bucket name no other test run uses.
func uniqueBucket(tag string) string {
	return "fence-" + tag + "-" + strings.ToLower(rand.Text()[:10])
}

// newBucket creates a bucket of its own with replicas copies and deletes
// it when the test ends.
func newBucket(t testing.TB, js jetstream.JetStream, tag string, replicas int) string {
	t.Helper()
	bucket := uniqueBucket(tag)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := CreateBucket(ctx, js, bucket, replicas); err != nil {
		t.Fatalf("CreateBucket(%q): %v", bucket, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = js.DeleteKeyValue(ctx, bucket)
	})
	return bucket
}

// testLocker is a Locker of the tests, with the store under it.
type testLocker struct {
	*fence.Locker
	d *store
}

// newTestLocker returns a Locker on bucket through js that remembers what
// it sees in obs (nil: its own).
func newTestLocker(t testing.TB, js jetstream.JetStream, bucket string, opts *Options, obs *clockfree.Observations) testLocker {
	t.Helper()
	d, err := newStore(js, bucket, opts, obs)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	l, err := driverLocker(d)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return testLocker{Locker: l, d: d}
}

// server is a nats-server of a test's own.
type server struct {
	*testproc.Proc
	name string
	url  string
	dir  string
}

// serverConfig says how to start a test's own server.
type serverConfig struct {
	// unsynced leaves sync_interval at its default (every two minutes).
	unsynced bool
	// cluster names the route ports of every member, this one's included
	// at index self; nil for a standalone server.
	routes []int
	self   int
}

// startServer starts nats-server with JetStream, its store in a
// temporary directory of t, and waits until JetStream answers (for a
// member of a cluster, only until it listens: the cluster answers once
// a majority runs).
func startServer(t testing.TB, name string, c serverConfig) *server {
	t.Helper()
	bin := serverBin(t)
	dir := t.TempDir()
	port := testproc.FreePort(t)
	conf := fmt.Sprintf("server_name: %s\nlisten: 127.0.0.1:%d\njetstream {\n\tstore_dir: %q\n", name, port, filepath.Join(dir, "store"))
	if !c.unsynced {
		conf += "\tsync_interval: always\n"
	}
	conf += "}\n"
	if c.routes != nil {
		var routes []string
		for i, p := range c.routes {
			if i != c.self {
				routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
			}
		}
		conf += fmt.Sprintf("cluster {\n\tname: fence-test\n\tlisten: 127.0.0.1:%d\n\troutes: [%s]\n}\n", c.routes[c.self], strings.Join(routes, ", "))
	}
	file := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &server{Proc: testproc.Start(t, name, bin, "-c", file), name: name, url: fmt.Sprintf("nats://127.0.0.1:%d", port), dir: dir}
	s.WaitLog(t.Context(), "Server is ready", 30*time.Second)
	return s
}

// restart starts s again after Kill and waits until it listens.
func (s *server) restart(t testing.TB) {
	t.Helper()
	n := strings.Count(s.Log(), "Server is ready")
	s.Restart()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(s.Log(), "Server is ready") <= n {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start again within 30 s", s.name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// retry calls f until it succeeds or timeout passes, and returns its last
// error.
func retry(timeout time.Duration, f func(ctx context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := f(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
