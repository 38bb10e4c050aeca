package etcd

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/clustertest"
)

// leaderOf returns the index in ms of the cluster's leader, asking each
// member that answers.
func leaderOf(t *testing.T, c *clientv3.Client, ms []*member) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for i, m := range ms {
			if !m.proc.Running() {
				continue
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			st, err := c.Status(ctx, m.clientAddr)
			cancel()
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				return i
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no member says it leads the cluster after 10 s")
	return -1
}

// TestClusterLeaderKill runs holders that acquire, renew and release two
// keys in a loop through a client of all three members of a cluster,
// while the test kills the leader with SIGKILL and, later, starts it
// again. Every token issued for a key is higher than every token issued
// for it by an Acquire that had returned before this one started, no
// token is issued twice, and the holders go on taking the keys after the
// failover and after the old leader is back.
func TestClusterLeaderKill(t *testing.T) {
	t.Parallel()
	ms := startCluster(t, 3)
	endpoints := endpointsOf(ms)
	admin := newClient(t, endpoints)
	prefix := uniquePrefix("cluster")
	keys := []string{"a", "b"}
	const holders = 4
	const ttl = 2 * time.Second

	var lockers []*fence.Locker
	for range holders {
		// Each holder has its own client of all the members, as another
		// process would.
		lockers = append(lockers, newTestLocker(t, newClient(t, endpoints), &Options{Prefix: prefix, MinTTL: time.Second}).Locker)
	}
	r := clustertest.Start(t, lockers, clustertest.Options{Keys: keys, TTL: ttl})
	time.Sleep(2 * time.Second)
	old := leaderOf(t, admin, ms)
	ms[old].proc.Kill()
	r.Killed()
	t.Logf("killed the leader %s", ms[old].name)
	time.Sleep(4 * time.Second)
	now := leaderOf(t, admin, ms)
	if now == old {
		t.Fatalf("the killed member %s still leads", ms[old].name)
	}
	ms[old].proc.Restart()
	r.Restarted()
	t.Logf("the new leader is %s; restarted %s", ms[now].name, ms[old].name)
	time.Sleep(3 * time.Second)
	r.Stop()
	got := r.Check(t)
	for _, key := range keys {
		tokens := got[key]
		info, err := newTestLocker(t, admin, &Options{Prefix: prefix, MinTTL: time.Second}).Inspect(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		last := fence.Token(0)
		for _, a := range tokens {
			last = max(last, a.Token)
		}
		if info.Token < last {
			t.Errorf("key %q: Inspect shows token %d, below the highest issued %d", key, info.Token, last)
		}
		t.Logf("key %q: last token %d", key, last)
	}
}
