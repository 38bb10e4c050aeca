package torture

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"time"
)

// serverCluster is a private cluster of servers of one binary (etcd
// members, nats-servers), each in a directory of the run.
type serverCluster struct {
	bin     string
	members []*clusterMember
}

// clusterMember is one server of a serverCluster.
type clusterMember struct {
	name   string
	client string // host:port
	dir    string
	args   []string    // bin's arguments
	proc   *serverProc // nil while killed
}

// endpoints returns the members' client addresses, comma-separated.
func (c *serverCluster) endpoints() string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.client)
	}
	return strings.Join(eps, ",")
}

// start starts m, its output appended to server.log in its directory.
func (c *serverCluster) start(m *clusterMember) error {
	proc, err := startServerProc(filepath.Join(m.dir, "server.log"), c.bin, m.args...)
	m.proc = proc
	return err
}

// stop kills every member that runs.
func (c *serverCluster) stop() {
	for _, m := range c.members {
		m.proc.kill()
		m.proc = nil
	}
}

// errPollTimeout is what poll returns when its time ran out.
var errPollTimeout = errors.New("torture: poll timed out")

// poll calls try until it returns true, every interval, for at most limit:
// it returns nil once try does, ctx's error once ctx is done, and
// errPollTimeout after limit.
func poll(ctx context.Context, limit, interval time.Duration, try func() bool) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if try() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	return errPollTimeout
}
