package nats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/clustertest"
	"github.com/fencekit/fence/internal/testing/testproc"
	"github.com/fencekit/fence/lockers/lockertest"
)

// cluster is three nats-servers of a test's own, routed together, each
// with JetStream synced on every write.
type cluster struct {
	servers []*server
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	routes := []int{testproc.FreePort(t), testproc.FreePort(t), testproc.FreePort(t)}
	c := &cluster{}
	var wg sync.WaitGroup
	c.servers = make([]*server, len(routes))
	for i := range routes {
		wg.Go(func() { c.servers[i] = startServer(t, fmt.Sprintf("n%d", i+1), serverConfig{routes: routes, self: i}) })
	}
	wg.Wait()
	return c
}

// urls returns the client URLs of every member, comma-separated.
func (c *cluster) urls() string {
	var u []string
	for _, s := range c.servers {
		u = append(u, s.url)
	}
	return strings.Join(u, ",")
}

// byName returns the member named name.
func (c *cluster) byName(t *testing.T, name string) *server {
	t.Helper()
	for _, s := range c.servers {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no member named %q", name)
	return nil
}

// streamLeader returns the name of the server that leads bucket's stream,
// asking the JetStream API until one does (and, when not is set, is not
// not).
func streamLeader(t *testing.T, js jetstream.JetStream, bucket, not string) string {
	t.Helper()
	var leader string
	err := retry(60*time.Second, func(ctx context.Context) error {
		s, err := js.Stream(ctx, "KV_"+bucket)
		if err != nil {
			return err
		}
		info := s.CachedInfo()
		if info.Cluster == nil || info.Cluster.Leader == "" || info.Cluster.Leader == not {
			return errors.New("no leader yet")
		}
		leader = info.Cluster.Leader
		return nil
	})
	if err != nil {
		t.Fatalf("the leader of bucket %q's stream: %v", bucket, err)
	}
	return leader
}

// TestConformanceCluster runs the suite on a bucket of three replicas on
// a cluster of its own (compare-and-set conflicts there answer 10164, not
// 10071), whose Restart kills the server leading the bucket's stream with
// SIGKILL, waits for another to lead and starts the killed one again:
// tokens keep increasing across the failover.
func TestConformanceCluster(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	urls := c.urls()
	h := harness(t, urls, 3, nil)
	restart := h.Restart
	h.Restart = func(t *testing.T) {
		_, admin := connect(t, urls)
		var bucket string
		if err := retry(30*time.Second, func(ctx context.Context) error {
			names := admin.KeyValueStoreNames(ctx)
			for n := range names.Name() {
				if strings.HasPrefix(n, "fence-suite-") {
					bucket = n
				}
			}
			return names.Error()
		}); err != nil || bucket == "" {
			t.Fatalf("the suite's bucket: %q, %v", bucket, err)
		}
		old := streamLeader(t, admin, bucket, "")
		c.byName(t, old).Kill()
		now := streamLeader(t, admin, bucket, old)
		c.byName(t, old).restart(t)
		t.Logf("killed the stream leader %s; %s leads; %s restarted", old, now, old)
		restart(t)
	}
	lockertest.Run(t, h)
}

// TestClusterLeaderKill runs holders that acquire, renew and release two
// keys in a loop, each through a connection of its own to all three
// members, on a bucket of three replicas, while the test kills the
// stream's leader with SIGKILL and later starts it again. A long holder,
// a fence.Session renewing in the background, holds a third key across it
// all while contenders try it, and leases taken just before the kill and
// never renewed ("pinned") must be there after it. Every token issued for
// a key is higher than every token issued for it by an Acquire that had
// returned before this one started, no token is issued twice, the holders
// go on taking the keys after the failover and after the old leader is
// back, no acknowledged lease is lost, and no contender gets the long
// holder's key before the long holder's lease has run out (the last
// ValidUntil its renewals gave it).
func TestClusterLeaderKill(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	urls := c.urls()
	_, admin := connect(t, urls)
	var bucket string
	if err := retry(60*time.Second, func(ctx context.Context) error {
		bucket = uniqueBucket("cluster")
		return CreateBucket(ctx, admin, bucket, 3)
	}); err != nil {
		t.Fatalf("create a bucket of 3 replicas: %v", err)
	}
	// NATS's Raft elects a stream leader 4 to 9 s after the old one stops
	// answering: holders' leases end meanwhile, the long holder's must not.
	const ttl = 3 * time.Second
	const longTTL = 30 * time.Second
	keys := []string{"a", "b"}
	const holders = 4
	newLocker := func() testLocker {
		_, js := connect(t, urls)
		return newTestLocker(t, js, bucket, nil, nil)
	}

	long := newLocker()
	held := clustertest.HoldLong(t, long.Locker, "long", longTTL)

	var lockers []*fence.Locker
	for range holders {
		lockers = append(lockers, newLocker().Locker)
	}
	r := clustertest.Start(t, lockers, clustertest.Options{Keys: keys, TTL: ttl, Long: "long"})
	time.Sleep(2 * time.Second)
	// Leases acknowledged just before the kill, never renewed.
	pinner := newLocker()
	var pinned []fence.Lease
	for i := range 5 {
		lease, err := pinner.Acquire(t.Context(), fmt.Sprintf("pin-%d", i), time.Hour, nil)
		if err != nil {
			t.Fatalf("pin %d: %v", i, err)
		}
		pinned = append(pinned, lease)
	}
	old := streamLeader(t, admin, bucket, "")
	c.byName(t, old).Kill()
	r.Killed()
	t.Logf("killed the stream leader, %s", old)
	now := streamLeader(t, admin, bucket, old)
	t.Logf("the new stream leader is %s", now)
	time.Sleep(3 * ttl)
	c.byName(t, old).restart(t)
	r.Restarted()
	t.Logf("restarted %s", old)
	time.Sleep(3 * ttl)
	r.Stop()
	r.Check(t)

	// The pinned leases: acknowledged before the kill, still held with
	// their tokens after it, and renewable.
	for _, p := range pinned {
		info, err := pinner.Inspect(t.Context(), p.Key)
		if err != nil || !info.Held || info.Token != p.Token || info.Owner != p.Owner {
			t.Errorf("Inspect(%q) after the failover = %+v, %v; want held by its owner with token %d", p.Key, info, err, p.Token)
			continue
		}
		if _, err := pinner.Renew(t.Context(), p); err != nil {
			t.Errorf("Renew(%q) after the failover: %v", p.Key, err)
		}
	}

	// The long holder: kept across the failover, and no contender got
	// its key before its last renewal ran out.
	r.CheckLong(t, held, long.Locker, true)
}
