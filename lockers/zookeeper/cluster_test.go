package zookeeper

import (
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/clustertest"
	"github.com/fencekit/fence/internal/testing/zktest"
)

// TestClusterLeaderKill runs holders that acquire, renew and release two
// keys in a loop, each through a session of its own with all three servers
// of an ensemble, while the test kills the leader with SIGKILL and later
// starts it again; a long holder, a fence.Session renewing in the
// background, holds a third key across it all while contenders try it.
// Every token issued for a key is higher than every token issued for it
// by an Acquire that had returned before this one started, no token is
// issued twice, the holders go on taking the keys after the failover and
// after the old leader is back, and no contender gets the long holder's
// key before the long holder's lease has run out (the last ValidUntil its
// renewals gave it).
func TestClusterLeaderKill(t *testing.T) {
	t.Parallel()
	e := zktest.StartEnsemble(t, 3)
	servers := e.Servers()
	root := uniqueRoot("cluster")
	const session = zktest.MaxSessionTimeout // 5 s: outlives the election
	const ttl = 3 * time.Second              // at most two thirds of it
	opts := &Options{Root: root, SessionTimeout: session}
	keys := []string{"a", "b"}
	const holders = 4

	long := newTestLocker(t, connect(t, servers, session), opts)
	held := clustertest.HoldLong(t, long.Locker, "long", ttl)

	var lockers []*fence.Locker
	for range holders {
		lockers = append(lockers, newTestLocker(t, connect(t, servers, session), opts).Locker)
	}
	r := clustertest.Start(t, lockers, clustertest.Options{Keys: keys, TTL: ttl, Long: "long"})
	time.Sleep(2 * time.Second)
	old := e.Leader(t)
	e.Kill(t, old)
	r.Killed()
	t.Logf("killed the leader, server %d", old)
	time.Sleep(3 * ttl)
	now := e.Leader(t)
	if now == old {
		t.Fatalf("the killed server %d still leads", old)
	}
	e.Restart(t, old)
	r.Restarted()
	t.Logf("the new leader is server %d; restarted server %d", now, old)
	time.Sleep(2 * ttl)
	r.Stop()
	r.Check(t)

	// The long holder: kept across the failover, or lost, and then only
	// after its last renewal ran out.
	r.CheckLong(t, held, long.Locker, false)
}
