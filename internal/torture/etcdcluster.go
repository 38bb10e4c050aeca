package torture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/fencekit/fence/internal/etcdclient"
)

// EnvEtcdServer names the etcd binary. With it set the run starts a
// private cluster of three members whose leader it kills; otherwise it
// uses the servers of FENCE_ETCD_ENDPOINTS, and cutting every proxied
// connection stands in.
const EnvEtcdServer = "FENCE_ETCD_SERVER"

// etcdPath is the run's way to etcd: the members' client addresses
// (host:port, comma-separated), through the run's proxies and directly.
type etcdPath struct{ faulty, clean string }

// Etcd returns the client addresses of etcd members for the run
// (host:port, comma-separated): faulty through the run's fault-injecting
// proxies, one per member, clean directly. See EnvEtcdServer for which
// servers.
func (s *Stage) Etcd(ctx context.Context) (faulty, clean string, err error) {
	s.servers.Lock()
	defer s.servers.Unlock()
	if p := s.etcd; p != nil {
		return p.faulty, p.clean, nil
	}
	p := &etcdPath{}
	var c *etcdCluster
	if bin := os.Getenv(EnvEtcdServer); bin != "" {
		if c, err = startEtcdCluster(ctx, bin, filepath.Join(s.Dir, "etcd"), 3); err != nil {
			return "", "", err
		}
		s.Defer(c.stop)
		p.clean = c.endpoints()
	} else {
		v, err := need(EnvEtcdEndpoints)
		if err != nil {
			return "", "", err
		}
		p.clean = v[0]
		if _, rest, ok := strings.Cut(p.clean, "://"); ok {
			p.clean, _, _ = strings.Cut(rest, "/")
		}
	}
	if p.faulty, err = s.proxiedHosts(p.clean); err != nil {
		return "", "", err
	}
	if c != nil {
		s.addDisruptor("etcd-leader-kill", func(ctx context.Context) error {
			s.Counts.Add(FaultFailover)
			return c.killLeader(ctx)
		})
	}
	s.etcd = p
	return p.faulty, p.clean, nil
}

// etcdURL returns the URLs of a store under the prefix /RUN-ID/suffix/ on
// the run's etcd members.
func etcdURL(suffix string) URLs {
	return func(ctx context.Context, s *Stage) (string, string, error) {
		faulty, clean, err := s.Etcd(ctx)
		if err != nil {
			return "", "", err
		}
		build := func(hosts string) string { return "etcd://" + hosts + "/" + s.ID + "/" + suffix + "/" }
		return build(faulty), build(clean), nil
	}
}

// etcdCluster is a private cluster of etcd members in a directory of the
// run.
type etcdCluster struct {
	serverCluster
	dir    string
	client *clientv3.Client // of every member, for Status
}

func startEtcdCluster(ctx context.Context, bin, dir string, n int) (*etcdCluster, error) {
	c := &etcdCluster{serverCluster: serverCluster{bin: bin}, dir: dir}
	var initial, peers []string
	token := fmt.Sprintf("fence-torture-%d", time.Now().UnixNano()) // one per cluster
	for i := range n {
		m := &clusterMember{name: fmt.Sprintf("m%d", i), dir: filepath.Join(dir, fmt.Sprint(i))}
		var peer string
		for _, a := range []*string{&m.client, &peer} {
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			*a = fmt.Sprintf("127.0.0.1:%d", port)
		}
		c.members = append(c.members, m)
		peers = append(peers, peer)
		initial = append(initial, m.name+"=http://"+peer)
	}
	for i, m := range c.members {
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			return nil, err
		}
		// Elections within a second: a loaded machine must not make
		// heartbeats late enough to start them by itself.
		m.args = []string{
			"--name", m.name, "--data-dir", filepath.Join(m.dir, "data"), "--log-level", "warn",
			"--listen-client-urls", "http://" + m.client, "--advertise-client-urls", "http://" + m.client,
			"--listen-peer-urls", "http://" + peers[i], "--initial-advertise-peer-urls", "http://" + peers[i],
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", token,
			"--heartbeat-interval", "100", "--election-timeout", "1000",
		}
		if err := c.start(m); err != nil {
			c.stop()
			return nil, err
		}
	}
	cl, err := etcdclient.New("etcd", clientv3.Config{Endpoints: strings.Split(c.endpoints(), ","), DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.stop()
		return nil, err
	}
	c.client = cl
	if _, err := c.waitLeader(ctx, -1); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// stop closes the client and kills every member that runs.
func (c *etcdCluster) stop() {
	if c.client != nil {
		_ = c.client.Close()
	}
	c.serverCluster.stop()
}

// status asks member m, with the maintenance Status API, for its member
// ID and the ID of the leader it follows (0: none).
func (c *etcdCluster) status(ctx context.Context, m *clusterMember) (self, leader uint64, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := c.client.Status(ctx, m.client)
	if err != nil {
		return 0, 0, err
	}
	if len(st.Errors) > 0 {
		return 0, 0, errors.New(strings.Join(st.Errors, "; "))
	}
	return st.Header.MemberId, st.Leader, nil
}

// waitLeader waits until a member other than the one at index not (-1:
// any) says it leads, and returns its index.
func (c *etcdCluster) waitLeader(ctx context.Context, not int) (int, error) {
	var last error
	found := -1
	err := poll(ctx, 60*time.Second, 100*time.Millisecond, func() bool {
		for i, m := range c.members {
			if i == not || m.proc == nil {
				continue
			}
			self, leader, err := c.status(ctx, m)
			if err != nil {
				last = err
				continue
			}
			if leader != 0 && leader == self {
				found = i
				return true
			}
		}
		return false
	})
	if errors.Is(err, errPollTimeout) {
		return -1, fmt.Errorf("torture: no etcd leader within 60 s (last error %v)%s", last, c.logTails())
	}
	return found, err
}

// logTails returns the end of each member's log, for an error: the run's
// directory is removed when it ends.
func (c *etcdCluster) logTails() string {
	var b strings.Builder
	for _, m := range c.members {
		log, _ := os.ReadFile(filepath.Join(m.dir, "server.log"))
		if len(log) > 800 {
			log = log[len(log)-800:]
		}
		fmt.Fprintf(&b, "\n%s's log ends: %s", m.name, log)
	}
	return b.String()
}

// waitFollower waits until member m answers Status and follows a leader
// other than itself: it has rejoined the cluster.
func (c *etcdCluster) waitFollower(ctx context.Context, m *clusterMember) error {
	var last error
	err := poll(ctx, 60*time.Second, 100*time.Millisecond, func() bool {
		self, leader, err := c.status(ctx, m)
		last = err
		return err == nil && leader != 0 && leader != self
	})
	if errors.Is(err, errPollTimeout) {
		return fmt.Errorf("torture: etcd member %s did not rejoin within 60 s (last error %v; log %s)", m.name, last, filepath.Join(m.dir, "server.log"))
	}
	return err
}

// killLeader kills the leader (SIGKILL), waits for another member to be
// elected, starts the killed one again on its data directory and returns
// when it follows the new leader. It runs to its end even when ctx ends
// during it (with a deadline of its own), so that the read-back after the
// run finds every member up.
func (c *etcdCluster) killLeader(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 90*time.Second)
	defer cancel()
	i, err := c.waitLeader(ctx, -1)
	if err != nil {
		return err
	}
	m := c.members[i]
	m.proc.kill()
	m.proc = nil
	if _, err := c.waitLeader(ctx, i); err != nil {
		return err
	}
	if err := c.start(m); err != nil {
		return err
	}
	return c.waitFollower(ctx, m)
}
