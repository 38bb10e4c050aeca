package torture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Environment variables read for ZooKeeper. scripts/sqlzk.sh exports them
// all; with FENCE_JAVA and FENCE_ZK_CLASSPATH the run starts a private
// ensemble of three servers whose leader it kills; otherwise it uses the
// standalone server of FENCE_ZK_SERVERS, and cutting every proxied
// connection stands in.
const (
	EnvZKServers   = "FENCE_ZK_SERVERS"
	EnvJava        = "FENCE_JAVA"
	EnvZKClasspath = "FENCE_ZK_CLASSPATH"
)

// zkPath is the run's way to ZooKeeper: the servers' client addresses
// (host:port, comma-separated), directly and through the run's proxies.
type zkPath struct{ faulty, clean string }

// ZooKeeper returns the client addresses of ZooKeeper servers for the run
// (host:port, comma-separated): faulty through the run's fault-injecting
// proxies, one per server, clean directly. See the Env constants for
// which servers.
func (s *Stage) ZooKeeper(ctx context.Context) (faulty, clean string, err error) {
	s.servers.Lock()
	defer s.servers.Unlock()
	if p := s.zk; p != nil {
		return p.faulty, p.clean, nil
	}
	p := &zkPath{}
	var e *zkEnsemble
	if java, cp := os.Getenv(EnvJava), os.Getenv(EnvZKClasspath); java != "" && cp != "" {
		if e, err = startZKEnsemble(ctx, java, cp, filepath.Join(s.Dir, "zookeeper"), 3); err != nil {
			return "", "", err
		}
		s.Defer(e.stop)
		p.clean = e.servers()
	} else if p.clean = os.Getenv(EnvZKServers); p.clean == "" {
		return "", "", unavailable(EnvZKServers)
	}
	if p.faulty, err = s.proxiedHosts(p.clean); err != nil {
		return "", "", err
	}
	if e != nil {
		s.addDisruptor("zookeeper-leader-kill", func(ctx context.Context) error {
			s.Counts.Add(FaultRestart)
			return e.killLeader(ctx)
		})
	}
	s.zk = p
	return p.faulty, p.clean, nil
}

// zkURL returns the URLs of a store under the root /RUN-ID/suffix on the
// run's ZooKeeper servers, with the query query.
func zkURL(suffix, query string) URLs {
	return func(ctx context.Context, s *Stage) (string, string, error) {
		faulty, clean, err := s.ZooKeeper(ctx)
		if err != nil {
			return "", "", err
		}
		build := func(hosts string) string {
			u := "zk://" + hosts + "/" + s.ID + "/" + suffix
			if query != "" {
				u += "?" + query
			}
			return u
		}
		return build(faulty), build(clean), nil
	}
}

// zkEnsemble is a private ensemble of ZooKeeper servers in a directory of
// the run.
type zkEnsemble struct {
	java, classpath, dir string
	nodes                []*zkNode
}

type zkNode struct {
	id                      int
	clientPort, peer, elect int
	dir                     string
	proc                    *serverProc // nil while killed
}

func startZKEnsemble(ctx context.Context, java, classpath, dir string, n int) (*zkEnsemble, error) {
	e := &zkEnsemble{java: java, classpath: classpath, dir: dir}
	var servers []string
	for i := 1; i <= n; i++ {
		nd := &zkNode{id: i, dir: filepath.Join(dir, fmt.Sprint(i))}
		for _, p := range []*int{&nd.clientPort, &nd.peer, &nd.elect} {
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			*p = port
		}
		e.nodes = append(e.nodes, nd)
		servers = append(servers, fmt.Sprintf("server.%d=127.0.0.1:%d:%d", i, nd.peer, nd.elect))
	}
	for _, nd := range e.nodes {
		if err := os.MkdirAll(filepath.Join(nd.dir, "data"), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(nd.dir, "data", "myid"), []byte(fmt.Sprintln(nd.id)), 0o644); err != nil {
			return nil, err
		}
		cfg := fmt.Sprintf("tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n"+
			"admin.enableServer=false\n4lw.commands.whitelist=srvr,ruok\n%s\n",
			filepath.Join(nd.dir, "data"), nd.clientPort, strings.Join(servers, "\n"))
		if err := os.WriteFile(filepath.Join(nd.dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
			return nil, err
		}
		if err := e.start(nd); err != nil {
			e.stop()
			return nil, err
		}
	}
	if _, err := e.waitLeader(ctx, -1); err != nil {
		e.stop()
		return nil, err
	}
	return e, nil
}

func (e *zkEnsemble) servers() string {
	var hs []string
	for _, nd := range e.nodes {
		hs = append(hs, fmt.Sprintf("127.0.0.1:%d", nd.clientPort))
	}
	return strings.Join(hs, ",")
}

func (e *zkEnsemble) start(nd *zkNode) error {
	proc, err := startServerProc(filepath.Join(nd.dir, "server.log"), e.java, "-Xmx128m", "-XX:+UseSerialGC", "-cp", e.classpath,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(nd.dir, "zoo.cfg"))
	nd.proc = proc
	return err
}

func (e *zkEnsemble) kill(nd *zkNode) {
	nd.proc.kill()
	nd.proc = nil
}

func (e *zkEnsemble) stop() {
	for _, nd := range e.nodes {
		e.kill(nd)
	}
}

// mode asks a server for its role ("leader", "follower", "standalone"),
// with the srvr command.
func zkMode(ctx context.Context, port int) (string, error) {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return "", err
	}
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return m, nil
		}
	}
	return "", errors.New("torture: ZooKeeper's srvr answer has no Mode (not serving)")
}

// waitLeader waits until a server other than the one at index not (-1:
// any) leads, and returns its index.
func (e *zkEnsemble) waitLeader(ctx context.Context, not int) (int, error) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for i, nd := range e.nodes {
			if i == not || nd.proc == nil {
				continue
			}
			if m, err := zkMode(ctx, nd.clientPort); err == nil && m == "leader" {
				return i, nil
			}
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return -1, fmt.Errorf("torture: no ZooKeeper leader within 60 s (logs under %s)", e.dir)
}

// killLeader kills the leader (SIGKILL), waits for another to be elected,
// and starts the killed server again, as a follower.
func (e *zkEnsemble) killLeader(ctx context.Context) error {
	i, err := e.waitLeader(ctx, -1)
	if err != nil {
		return err
	}
	e.kill(e.nodes[i])
	if _, err := e.waitLeader(ctx, i); err != nil {
		return err
	}
	return e.start(e.nodes[i])
}

// ZooKeeperLocker is lockers/zookeeper, its lock nodes under a root named
// for the run (see Stage.ZooKeeper for the servers), with sessions of 4 s:
// leases of 2 s fit in two thirds of one, and a client cut off from a
// killed leader has time to reach another server before its session
// expires.
var ZooKeeperLocker = LockerKind{
	Name: "zookeeper", Env: []string{EnvZKServers}, TTL: 2 * time.Second, Wave: 1,
	URL: zkURL("locks", "session-timeout=4s&connect-timeout=3s"),
}
