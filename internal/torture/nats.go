package torture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Environment variables read for NATS; scripts/nats.sh exports them all.
// With FENCE_NATS_BIN the run starts a private cluster of three servers
// (JetStream synced on every write) and kills the leader of its lock
// bucket's stream; otherwise it uses the server of FENCE_NATS_URL, and
// cutting every proxied connection stands in.
const (
	EnvNATSURL = "FENCE_NATS_URL"
	EnvNATSBin = "FENCE_NATS_BIN"
)

// natsPath is the run's way to NATS: the servers' client addresses
// (host:port, comma-separated), through the run's proxies and directly,
// and the number of replicas a bucket gets.
type natsPath struct {
	faulty, clean string
	replicas      int
}

// NATSLocker is lockers/nats on a bucket of the run's own (see
// Stage.NATS for the servers), with leases of 2 s.
var NATSLocker = LockerKind{
	Name: "nats", Env: []string{EnvNATSURL}, TTL: 2 * time.Second, Wave: 1,
	URL: natsURL("locks"),
}

// NATS returns the client addresses of NATS servers for the run
// (host:port, comma-separated): faulty through the run's fault-injecting
// proxies, one per server, clean directly; and the replicas of a bucket.
// See the Env constants for which servers.
func (s *Stage) NATS(ctx context.Context) (faulty, clean string, replicas int, err error) {
	s.servers.Lock()
	defer s.servers.Unlock()
	if p := s.nats; p != nil {
		return p.faulty, p.clean, p.replicas, nil
	}
	p := &natsPath{replicas: 1}
	var c *natsCluster
	if bin := os.Getenv(EnvNATSBin); bin != "" {
		if c, err = startNATSCluster(ctx, bin, filepath.Join(s.Dir, "nats"), 3); err != nil {
			return "", "", 0, err
		}
		s.Defer(c.stop)
		p.clean, p.replicas = c.endpoints(), 3
	} else {
		v, err := need(EnvNATSURL)
		if err != nil {
			return "", "", 0, err
		}
		p.clean = v[0]
		if _, rest, ok := strings.Cut(p.clean, "://"); ok {
			p.clean, _, _ = strings.Cut(rest, "/")
			p.clean, _, _ = strings.Cut(p.clean, "?")
		}
	}
	if p.faulty, err = s.proxiedHosts(p.clean); err != nil {
		return "", "", 0, err
	}
	if c != nil {
		stream := "KV_" + natsBucket(s, "locks")
		s.addDisruptor("nats-stream-leader-kill", func(ctx context.Context) error {
			s.Counts.Add(FaultFailover)
			return c.killLeader(ctx, stream)
		})
	}
	s.nats = p
	return p.faulty, p.clean, p.replicas, nil
}

// natsBucket names the run's bucket for suffix.
func natsBucket(s *Stage, suffix string) string { return s.ID + "-" + suffix }

// natsURL returns the URLs of the run's bucket for suffix.
func natsURL(suffix string) URLs {
	return func(ctx context.Context, s *Stage) (string, string, error) {
		faulty, clean, replicas, err := s.NATS(ctx)
		if err != nil {
			return "", "", err
		}
		build := func(hosts string) string {
			return fmt.Sprintf("nats://%s?bucket=%s&replicas=%d&dial-timeout=3s", hosts, natsBucket(s, suffix), replicas)
		}
		return build(faulty), build(clean), nil
	}
}

// natsCluster is a private cluster of nats-servers in a directory of the
// run.
type natsCluster struct{ serverCluster }

func startNATSCluster(ctx context.Context, bin, dir string, n int) (*natsCluster, error) {
	c := &natsCluster{serverCluster{bin: bin}}
	var routes []string
	var clusterPorts []int
	for i := range n {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		rport, err := freePort()
		if err != nil {
			return nil, err
		}
		m := &clusterMember{name: fmt.Sprintf("n%d", i), client: fmt.Sprintf("127.0.0.1:%d", port), dir: filepath.Join(dir, fmt.Sprint(i))}
		m.args = []string{"-c", filepath.Join(m.dir, "nats.conf")}
		c.members = append(c.members, m)
		clusterPorts = append(clusterPorts, rport)
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", rport))
	}
	for i, m := range c.members {
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			return nil, err
		}
		// no_advertise: clients learn no server addresses from the
		// cluster, so they keep going through the run's proxies.
		conf := fmt.Sprintf(`server_name: %s
listen: %s
jetstream {
	store_dir: %q
	sync_interval: always
}
cluster {
	name: fence-torture
	listen: 127.0.0.1:%d
	no_advertise: true
	routes: [%s]
}
`, m.name, m.client, filepath.Join(m.dir, "store"), clusterPorts[i], strings.Join(routes, ", "))
		if err := os.WriteFile(filepath.Join(m.dir, "nats.conf"), []byte(conf), 0o644); err != nil {
			return nil, err
		}
		if err := c.start(m); err != nil {
			c.stop()
			return nil, err
		}
	}
	// JetStream answers once the servers elected a meta leader.
	if err := c.wait(ctx, func(ctx context.Context, js jetstream.JetStream) error {
		_, err := js.AccountInfo(ctx)
		return err
	}); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// wait calls check with a JetStream of the running servers until it
// succeeds, for at most 60 s.
func (c *natsCluster) wait(ctx context.Context, check func(ctx context.Context, js jetstream.JetStream) error) error {
	var urls []string
	for _, m := range c.members {
		if m.proc != nil {
			urls = append(urls, "nats://"+m.client)
		}
	}
	var last error
	err := poll(ctx, 60*time.Second, 200*time.Millisecond, func() bool {
		last = func() error {
			nc, err := natsgo.Connect(strings.Join(urls, ","), natsgo.Timeout(time.Second))
			if err != nil {
				return err
			}
			defer nc.Close()
			js, err := jetstream.New(nc)
			if err != nil {
				return err
			}
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return check(cctx, js)
		}()
		return last == nil
	})
	if errors.Is(err, errPollTimeout) {
		return fmt.Errorf("torture: NATS cluster not ready within 60 s: %v", last)
	}
	return err
}

// leaderOf returns the name of the server leading stream, and its other
// replicas.
func leaderOf(ctx context.Context, js jetstream.JetStream, stream string) (string, []*jetstream.PeerInfo, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return "", nil, err
	}
	info := st.CachedInfo()
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", nil, errors.New("no leader")
	}
	return info.Cluster.Leader, info.Cluster.Replicas, nil
}

// killLeader kills the server leading stream (SIGKILL), waits for another
// to be elected, starts the killed one again on its store and returns
// once it is a current replica again. It runs to its end even when ctx
// ends during it (with a deadline of its own), so that the read-back
// after the run finds every server up. Before the run made its bucket,
// it does nothing.
func (c *natsCluster) killLeader(ctx context.Context, stream string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 90*time.Second)
	defer cancel()
	var old string
	if err := c.wait(ctx, func(ctx context.Context, js jetstream.JetStream) (err error) {
		old, _, err = leaderOf(ctx, js, stream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			old, err = "", nil
		}
		return err
	}); err != nil || old == "" {
		return err
	}
	var m *clusterMember
	for _, s := range c.members {
		if s.name == old {
			m = s
		}
	}
	if m == nil {
		return fmt.Errorf("torture: stream %s led by unknown server %q", stream, old)
	}
	m.proc.kill()
	m.proc = nil
	if err := c.wait(ctx, func(ctx context.Context, js jetstream.JetStream) error {
		leader, _, err := leaderOf(ctx, js, stream)
		if err == nil && leader == old {
			err = errors.New("the killed server still leads")
		}
		return err
	}); err != nil {
		return err
	}
	if err := c.start(m); err != nil {
		return err
	}
	return c.wait(ctx, func(ctx context.Context, js jetstream.JetStream) error {
		_, replicas, err := leaderOf(ctx, js, stream)
		if err != nil {
			return err
		}
		for _, r := range replicas {
			if r.Name == m.name && r.Current {
				return nil
			}
		}
		return fmt.Errorf("server %s is not a current replica yet", m.name)
	})
}
