package zookeeper

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// testSessionTimeout is the session timeout of the tests' clients, which
// the shared server (tick 500 ms: sessions of 1 s to 10 s) grants as asked.
const testSessionTimeout = 9 * time.Second

// silent discards the ZooKeeper client's log lines.
type silent struct{}

func (silent) Printf(string, ...any) {}

// connect opens a session with servers (comma-separated) and waits for
// it; the connection is closed when the test ends.
func connect(t testing.TB, servers string, timeout time.Duration) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect(strings.Split(servers, ","), timeout, zk.WithLogger(silent{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatalf("connect to ZooKeeper at %s: %v", servers, err)
	}
	t.Cleanup(c.Close)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go drain(events)
				return c
			}
		case <-deadline:
			t.Fatalf("no ZooKeeper session with %s after 20 s", servers)
		}
	}
}

// drain reads a connection's events until it closes.
func drain(events <-chan zk.Event) {
	for range events {
	}
}

// sharedServers returns the address of the shared test server.
func sharedServers(t testing.TB) string {
	t.Helper()
	return testenv.ZooKeeperServers(t)
}

// uniqueRoot returns a root no other test run uses.
func uniqueRoot(tag string) string {
	return fmt.Sprintf("/fence-test/%s-%s", tag, strings.ToLower(rand.Text()[:10]))
}

// testLocker is a Locker of the tests, with the store under it.
type testLocker struct {
	*fence.Locker
	d *store
}

// newTestLocker returns a Locker on c under a root of its own unless opts
// names one.
func newTestLocker(t testing.TB, c *zk.Conn, opts *Options) testLocker {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Root == "" {
		o.Root = uniqueRoot("locker")
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = testSessionTimeout
	}
	l, d, err := newLocker(c, &o, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return testLocker{Locker: l, d: d}
}
