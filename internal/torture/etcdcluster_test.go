package torture

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/testenv"
)

// TestEtcdClusterLeaderKill starts the run's private cluster of three
// members, kills its leader, and checks that another member leads and
// that the killed one follows it again, on its own data, when the kill
// returns.
func TestEtcdClusterLeaderKill(t *testing.T) {
	bin := testenv.EtcdServer(t)
	c, err := startEtcdCluster(t.Context(), bin, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer c.stop()
	old, err := c.waitLeader(t.Context(), -1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := c.client.Put(ctx, "before", "1"); err != nil {
		t.Fatalf("Put: %v", err)
	}
	start := time.Now()
	if err := c.killLeader(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("leader %s killed, rejoined in %v", c.members[old].name, time.Since(start).Round(time.Millisecond))
	now, err := c.waitLeader(t.Context(), -1)
	if err != nil {
		t.Fatal(err)
	}
	if now == old {
		t.Errorf("the killed member %s leads again at once; want another", c.members[old].name)
	}
	self, leader, err := c.status(t.Context(), c.members[old])
	if err != nil || leader == 0 || leader == self {
		t.Errorf("the restarted member: self %x, leader %x, %v; want it to follow", self, leader, err)
	}
	if _, err := os.Stat(c.members[old].dir + "/data/member"); err != nil {
		t.Errorf("the restarted member's data: %v", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	got, err := c.client.Get(ctx, "before")
	if err != nil || len(got.Kvs) != 1 {
		t.Errorf("Get after the failover = %v, %v; want the value written before", got, err)
	}
}
