// Package zktest runs ZooKeeper ensembles that a test starts, kills and
// restarts itself: real QuorumPeerMain servers of the ZooKeeper that
// scripts/test.sh installed (testenv.Java, testenv.ZooKeeperClasspath),
// on loopback ports picked free, each with its configuration, myid file
// and data directory in a temporary directory of the test, so that a
// server killed and restarted keeps what it had.
//
// The servers tick every Tick, so that an ensemble elects a leader and
// grants sessions of 2 to 20 ticks quickly: a client's session of
// MaxSessionTimeout outlives the election after a leader's kill.
package zktest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/testproc"
)

// Timing of the servers.
const (
	// Tick is the servers' tickTime.
	Tick = 250 * time.Millisecond
	// MinSessionTimeout and MaxSessionTimeout bound the session
	// timeouts the servers grant: 2 and 20 ticks.
	MinSessionTimeout = 2 * Tick
	MaxSessionTimeout = 20 * Tick
)

// Ensemble is a ZooKeeper ensemble of a test.
type Ensemble struct {
	servers []*server
}

type server struct {
	id         int // myid, from 1
	clientAddr string
	proc       *testproc.Proc
}

// StartEnsemble starts n servers as one ensemble (n = 1 is a standalone
// server) and waits until it has a leader and every server serves. The
// servers are killed when the test ends; a failed test prints their logs.
func StartEnsemble(t testing.TB, n int) *Ensemble {
	t.Helper()
	java, cp := testenv.Java(t), testenv.ZooKeeperClasspath(t)
	e := &Ensemble{}
	var peers []string
	for i := range n {
		s := &server{id: i + 1, clientAddr: fmt.Sprintf("127.0.0.1:%d", testproc.FreePort(t))}
		e.servers = append(e.servers, s)
		peers = append(peers, fmt.Sprintf("server.%d=127.0.0.1:%d:%d", s.id, testproc.FreePort(t), testproc.FreePort(t)))
	}
	for _, s := range e.servers {
		dir := t.TempDir()
		cfg := strings.Join(append([]string{
			fmt.Sprintf("tickTime=%d", Tick.Milliseconds()),
			"initLimit=10",
			"syncLimit=5",
			"dataDir=" + dir,
			"clientPortAddress=127.0.0.1",
			"clientPort=" + strings.TrimPrefix(s.clientAddr, "127.0.0.1:"),
			"4lw.commands.whitelist=srvr,ruok",
			"admin.enableServer=false",
		}, peers...), "\n") + "\n"
		if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(fmt.Sprintf("%d\n", s.id)), 0o644); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "zoo.cfg")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		s.proc = testproc.Start(t, fmt.Sprintf("zookeeper-%d", s.id), java, "-Xmx128m",
			"-Dzookeeper.admin.enableServer=false", "-cp", cp,
			"org.apache.zookeeper.server.quorum.QuorumPeerMain", path)
	}
	e.WaitServing(t)
	return e
}

// Servers returns the client addresses of every server, comma-separated,
// as zk.Connect (split at the commas) and zk:// URLs take them.
func (e *Ensemble) Servers() string {
	var addrs []string
	for _, s := range e.servers {
		addrs = append(addrs, s.clientAddr)
	}
	return strings.Join(addrs, ",")
}

// Server returns the client address of server i (from 0).
func (e *Ensemble) Server(i int) string { return e.servers[i].clientAddr }

// Len returns the number of servers.
func (e *Ensemble) Len() int { return len(e.servers) }

// Leader returns the index of the server that leads (asking each running
// one with the srvr command), waiting up to 20 s for one.
func (e *Ensemble) Leader(t testing.TB) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for i, s := range e.servers {
			if s.proc.Running() && mode(s.clientAddr) == "leader" || len(e.servers) == 1 && mode(s.clientAddr) == "standalone" {
				return i
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no ZooKeeper server leads after 20 s")
	return -1
}

// WaitServing waits up to 30 s until every running server serves, as the
// leader, a follower or a standalone server.
func (e *Ensemble) WaitServing(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		serving := true
		for _, s := range e.servers {
			if s.proc.Running() && mode(s.clientAddr) == "" {
				serving = false
			}
		}
		if serving {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ZooKeeper ensemble %s not serving after 30 s", e.Servers())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Kill kills server i with SIGKILL, as a crash would.
func (e *Ensemble) Kill(t testing.TB, i int) {
	t.Helper()
	e.servers[i].proc.Kill()
}

// Restart starts server i again on its data (after Kill) and waits until
// it serves.
func (e *Ensemble) Restart(t testing.TB, i int) {
	t.Helper()
	e.servers[i].proc.Restart()
	e.WaitServing(t)
}

// Pause stops server i with SIGSTOP (it keeps its sockets but answers
// nothing) until Resume.
func (e *Ensemble) Pause(i int) { e.servers[i].proc.Pause() }

// Resume continues a paused server.
func (e *Ensemble) Resume(i int) { e.servers[i].proc.Resume() }

// mode asks the server at addr its mode with the srvr command: "leader",
// "follower", "standalone", or "" when it does not answer or serve.
func mode(addr string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return ""
	}
	s := bufio.NewScanner(c)
	for s.Scan() {
		if m, ok := strings.CutPrefix(s.Text(), "Mode: "); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}
