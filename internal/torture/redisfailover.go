package torture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Environment variables read for Redis behind Sentinel: the binaries of
// the server and of Sentinel (scripts/kvstores.sh exports them). The run
// starts a private primary, one replica and three Sentinels, and fails the
// primary over (see Stage.RedisSentinel).
const (
	EnvRedisServer   = "FENCE_REDIS_SERVER"
	EnvRedisSentinel = "FENCE_REDIS_SENTINEL"
)

// sentinelMaster is the name the run's Sentinels monitor the primary by.
const sentinelMaster = "m"

// sentinelLag is how long a failover keeps the replica behind while the
// workers acquire on the primary, before the primary is killed: long
// enough for several acquisitions on every key, short enough that
// Sentinel still promotes the replica (it skips replicas disconnected for
// more than ten times down-after-milliseconds).
const sentinelLag = 1500 * time.Millisecond

// sentinelPath is the run's way to Redis behind Sentinel: the Sentinels'
// addresses (host:port, comma-separated).
type sentinelPath struct{ sentinels string }

// RedisSentinel returns the addresses of the Sentinels (host:port,
// comma-separated) of a private primary and replica that it starts for
// the run, with three Sentinels, under the run's directory. Failing the
// primary over is one of the run's disruptions: it stops the replica
// (SIGSTOP) and cuts its replication link, so that what the workers
// acquire for a while reaches the primary alone; kills the primary
// (SIGKILL) and resumes the replica, which the Sentinels promote; and
// starts the old primary again, empty, as the new primary's replica. The
// workers reach the data nodes directly, as the failover client does
// (the Sentinels name them): the run's proxies are not in the path.
func (s *Stage) RedisSentinel(ctx context.Context) (string, error) {
	s.servers.Lock()
	defer s.servers.Unlock()
	if p := s.sentinel; p != nil {
		return p.sentinels, nil
	}
	bins, err := need(EnvRedisServer, EnvRedisSentinel)
	if err != nil {
		return "", err
	}
	set, err := startSentinelSet(ctx, bins[0], bins[1], filepath.Join(s.Dir, "redis"))
	if err != nil {
		return "", err
	}
	s.Defer(set.stop)
	s.addDisruptor("redis-primary-failover", func(ctx context.Context) error {
		return set.failover(ctx, func() { s.Counts.Add(FaultFailover) })
	})
	s.sentinel = &sentinelPath{sentinels: strings.Join(set.sentinelAddrs, ",")}
	return s.sentinel.sentinels, nil
}

// sentinelURL returns the URLs (one, without faults of the run's own: the
// failover is the fault) of a locker on the run's Sentinels, its keys
// under a prefix of the run, with the query query added.
func sentinelURL(query string) URLs {
	return func(ctx context.Context, s *Stage) (string, string, error) {
		sentinels, err := s.RedisSentinel(ctx)
		if err != nil {
			return "", "", err
		}
		u := "redis+sentinel://" + sentinels + "/" + sentinelMaster + "?prefix=" + s.ID + ":locks:"
		if query != "" {
			u += "&" + query
		}
		return u, u, nil
	}
}

// redisNode is a data node of a sentinelSet.
type redisNode struct {
	name string
	port int
	dir  string
	proc *serverProc // nil while killed
	c    *goredis.Client
}

func (n *redisNode) addr() string { return "127.0.0.1:" + strconv.Itoa(n.port) }

// sentinelSet is a primary, its replica and three Sentinels of the run.
type sentinelSet struct {
	server, dir   string
	nodes         []*redisNode
	sentinels     []*serverProc
	sentinelAddrs []string
	sc            []*goredis.SentinelClient
}

func startSentinelSet(ctx context.Context, server, sentinel, dir string) (_ *sentinelSet, err error) {
	set := &sentinelSet{server: server, dir: dir}
	defer func() {
		if err != nil {
			set.stop() // what started before the failure
		}
	}()
	for _, name := range []string{"a", "b"} {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		n := &redisNode{name: name, port: port, dir: filepath.Join(dir, name)}
		if err := os.MkdirAll(n.dir, 0o755); err != nil {
			return nil, err
		}
		n.c = goredis.NewClient(&goredis.Options{Addr: n.addr(), MaxRetries: -1, DialTimeout: time.Second})
		set.nodes = append(set.nodes, n)
	}
	primary, replica := set.nodes[0], set.nodes[1]
	if err := set.start(ctx, primary, nil); err != nil {
		return nil, err
	}
	if err := set.start(ctx, replica, primary); err != nil {
		return nil, err
	}
	for i := range 3 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		sdir := filepath.Join(dir, fmt.Sprintf("sentinel-%d", i))
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			return nil, err
		}
		conf := filepath.Join(sdir, "sentinel.conf")
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 3000\n",
			port, sdir, sentinelMaster, primary.port, sentinelMaster, sentinelMaster)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return nil, err
		}
		p, err := startServerProc(filepath.Join(sdir, "sentinel.log"), sentinel, conf)
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		set.sentinels = append(set.sentinels, p)
		set.sentinelAddrs = append(set.sentinelAddrs, addr)
		set.sc = append(set.sc, goredis.NewSentinelClient(&goredis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second}))
	}
	if err := set.ready(ctx, primary, replica); err != nil {
		return nil, err
	}
	return set, nil
}

// start starts node n, as a replica of of when of is not nil, and waits
// until it answers PING.
func (set *sentinelSet) start(ctx context.Context, n, of *redisNode) error {
	args := []string{"--port", strconv.Itoa(n.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", n.dir, "--logfile", "", "--protected-mode", "no", "--repl-diskless-sync-delay", "0"}
	if of != nil {
		args = append(args, "--replicaof", "127.0.0.1", strconv.Itoa(of.port))
	}
	p, err := startServerProc(filepath.Join(n.dir, "server.log"), set.server, args...)
	if err != nil {
		return err
	}
	n.proc = p
	return waitUntil(ctx, 20*time.Second, "Redis "+n.name+" to answer (log "+filepath.Join(n.dir, "server.log")+")", func(ctx context.Context) error {
		return n.c.Ping(ctx).Err()
	})
}

func (set *sentinelSet) stop() {
	for _, p := range set.sentinels {
		p.kill()
	}
	for _, n := range set.nodes {
		n.proc.kill()
		n.proc = nil
		_ = n.c.Close()
	}
	for _, c := range set.sc {
		_ = c.Close()
	}
}

// ready waits until replica replicates primary and every Sentinel names
// primary as the primary and knows the replica (up) and the two other
// Sentinels, so that a failover can start at once.
func (set *sentinelSet) ready(ctx context.Context, primary, replica *redisNode) error {
	err := waitUntil(ctx, 30*time.Second, "Redis "+replica.name+" to replicate "+primary.name, func(ctx context.Context) error {
		info, err := primary.c.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "role:master") || !strings.Contains(info, "connected_slaves:1") || !strings.Contains(info, "state=online") {
			return errors.New("no replica online")
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, sc := range set.sc {
		err := waitUntil(ctx, 30*time.Second, "Sentinel "+set.sentinelAddrs[i]+" to know the primary, the replica and the other Sentinels", func(ctx context.Context) error {
			addr, err := sc.GetMasterAddrByName(ctx, sentinelMaster).Result()
			if err != nil {
				return err
			}
			if len(addr) != 2 || addr[1] != strconv.Itoa(primary.port) {
				return fmt.Errorf("names %v as the primary", addr)
			}
			replicas, err := sc.Replicas(ctx, sentinelMaster).Result()
			if err != nil {
				return err
			}
			others, err := sc.Sentinels(ctx, sentinelMaster).Result()
			if err != nil {
				return err
			}
			up := 0
			for _, r := range replicas {
				if r["port"] == strconv.Itoa(replica.port) && !strings.Contains(r["flags"], "down") && !strings.Contains(r["flags"], "disconnected") {
					up++
				}
			}
			if up != 1 || len(others) != 2 {
				return fmt.Errorf("knows %d replicas (%d up) and %d other Sentinels", len(replicas), up, len(others))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// roles returns the current primary and replica, as the Sentinels name
// the primary.
func (set *sentinelSet) roles(ctx context.Context) (primary, replica *redisNode, err error) {
	addr, err := set.sc[0].GetMasterAddrByName(ctx, sentinelMaster).Result()
	if err != nil {
		return nil, nil, err
	}
	for i, n := range set.nodes {
		if len(addr) == 2 && addr[1] == strconv.Itoa(n.port) {
			return n, set.nodes[1-i], nil
		}
	}
	return nil, nil, fmt.Errorf("torture: the Sentinels name %v as the primary, neither of the run's servers", addr)
}

// signal sends sig to the process group of p.
func signal(p *serverProc, sig syscall.Signal) {
	if p != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// failover fails the primary over, making the replica lag first (see
// Stage.RedisSentinel); counted calls count when it kills the primary.
// It runs to its end even when ctx ends during it (with a deadline of its
// own), so that no server is left stopped.
func (set *sentinelSet) failover(ctx context.Context, counted func()) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 90*time.Second)
	defer cancel()
	primary, replica, err := set.roles(ctx)
	if err != nil {
		return err
	}
	if err := set.ready(ctx, primary, replica); err != nil {
		return err
	}
	// The replica lags: stopped, and its link cut, what the primary
	// writes from now on exists on the primary alone.
	signal(replica.proc, syscall.SIGSTOP)
	if err := primary.c.ClientKillByFilter(ctx, "TYPE", "replica").Err(); err != nil {
		signal(replica.proc, syscall.SIGCONT)
		return fmt.Errorf("torture: CLIENT KILL TYPE replica on Redis %s: %w", primary.name, err)
	}
	time.Sleep(sentinelLag)
	counted()
	primary.proc.kill()
	primary.proc = nil
	signal(replica.proc, syscall.SIGCONT)
	err = waitUntil(ctx, 60*time.Second, "the Sentinels to promote Redis "+replica.name, func(ctx context.Context) error {
		for _, sc := range set.sc {
			addr, err := sc.GetMasterAddrByName(ctx, sentinelMaster).Result()
			if err != nil {
				return err
			}
			if len(addr) != 2 || addr[1] != strconv.Itoa(replica.port) {
				return fmt.Errorf("a Sentinel names %v as the primary", addr)
			}
		}
		info, err := replica.c.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "role:master") {
			return errors.New("not a master yet")
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The old primary comes back empty (no persistence), as a replica of
	// the new one.
	if err := set.start(ctx, primary, replica); err != nil {
		return err
	}
	return set.ready(ctx, replica, primary)
}

// waitUntil calls f until it returns nil, at most for timeout, and returns
// what it last returned, naming what it waited for.
func waitUntil(ctx context.Context, timeout time.Duration, what string, f func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		err := f(cctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("torture: waiting %v for %s: %w", timeout, what, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// The Redis lockers behind Sentinel, on the run's private primary,
// replica and Sentinels (see Stage.RedisSentinel), whose primary the run
// fails over while the replica lags.
var (
	// RedisSentinelLocker is lockers/redis over Sentinel without WAIT:
	// the promoted replica lacks the increments the primary had
	// acknowledged, and issues their tokens again. The run shows it as
	// expected violations (see Expected).
	RedisSentinelLocker = LockerKind{
		Name: "redis-sentinel", Env: []string{EnvRedisServer, EnvRedisSentinel}, TTL: time.Second,
		URL: sentinelURL(""),
		Expected: &Expected{
			Kinds: []string{KindTokenReissued, KindTokenRegressed, KindStaleAccepted, KindLost, KindPorcupine, KindLedger, KindNotConserved},
			Short: "async replication",
			Why: "Redis replication is asynchronous: a token the primary acknowledged before the replica had it is issued again " +
				"by the replica Sentinel promotes (lockers/redis, \"Failover\"); two holders then carry one token and a fenced " +
				"resource accepts both, so a resource's violations involving a reissued token follow from it",
		},
	}

	// RedisSentinelWaitLocker is lockers/redis over Sentinel with WAIT
	// for one replica (min-replicas=1): an acquisition the replica did
	// not acknowledge hands out no lease, so the promoted replica
	// issues no token twice.
	RedisSentinelWaitLocker = LockerKind{
		Name: "redis-sentinel-wait", Env: []string{EnvRedisServer, EnvRedisSentinel}, TTL: time.Second,
		URL: sentinelURL("min-replicas=1&wait-timeout=300ms"),
	}
)
