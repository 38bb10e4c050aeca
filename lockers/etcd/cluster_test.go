package etcd

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
)

// issued is a token a holder got, and when its Acquire started and ended.
type issued struct {
	token      fence.Token
	start, end time.Time
	holder     int
}

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

	var mu sync.Mutex
	got := map[string][]issued{}
	var phase atomic.Int32 // 0 before the kill, 1 after it, 2 after the restart
	var wins [3]atomic.Int32
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for h := range holders {
		// Each holder has its own client of all the members, as another
		// process would.
		l := newTestLocker(t, newClient(t, endpoints), &Options{Prefix: prefix, MinTTL: time.Second})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stopped.Load(); i++ {
				key := keys[(h+i)%len(keys)]
				owner := fence.NewOwnerID()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				start := time.Now()
				lease, err := l.Acquire(ctx, key, ttl, &fence.AcquireOptions{Owner: owner})
				end := time.Now()
				cancel()
				if err != nil && !errors.Is(err, fence.ErrHeld) {
					// The answer may have been lost: a lease won by
					// this attempt shows its owner.
					ictx, icancel := context.WithTimeout(context.Background(), 2*time.Second)
					info, ierr := l.Inspect(ictx, key)
					icancel()
					if ierr == nil && info.Owner == owner {
						mu.Lock()
						got[key] = append(got[key], issued{info.Token, start, time.Now(), h})
						mu.Unlock()
					}
					time.Sleep(20 * time.Millisecond)
					continue
				}
				if err != nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				mu.Lock()
				got[key] = append(got[key], issued{lease.Token, start, end, h})
				mu.Unlock()
				wins[phase.Load()].Add(1)
				for range 2 {
					rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
					lease, err = l.Renew(rctx, lease)
					rcancel()
					if err != nil {
						break
					}
				}
				rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
				if err == nil {
					_ = l.Release(rctx, lease)
				}
				rcancel()
			}
		}()
	}
	time.Sleep(2 * time.Second)
	old := leaderOf(t, admin, ms)
	ms[old].proc.Kill()
	phase.Store(1)
	t.Logf("killed the leader %s", ms[old].name)
	time.Sleep(4 * time.Second)
	now := leaderOf(t, admin, ms)
	if now == old {
		t.Fatalf("the killed member %s still leads", ms[old].name)
	}
	ms[old].proc.Restart()
	phase.Store(2)
	t.Logf("the new leader is %s; restarted %s", ms[now].name, ms[old].name)
	time.Sleep(3 * time.Second)
	stopped.Store(true)
	wg.Wait()

	for p, what := range []string{"before the kill", "after the kill", "after the restart"} {
		t.Logf("%s: %d acquisitions", what, wins[p].Load())
		if wins[p].Load() == 0 {
			t.Errorf("no acquisition succeeded %s", what)
		}
	}
	for _, key := range keys {
		tokens := got[key]
		if len(tokens) < 10 {
			t.Errorf("key %q: only %d tokens issued", key, len(tokens))
		}
		seen := map[fence.Token]issued{}
		for _, a := range tokens {
			if b, dup := seen[a.token]; dup {
				t.Errorf("key %q: token %d issued twice (to holders %d and %d)", key, a.token, b.holder, a.holder)
			}
			seen[a.token] = a
		}
		// Acquisitions that did not overlap in time got tokens in their
		// order.
		slices.SortFunc(tokens, func(a, b issued) int { return a.start.Compare(b.start) })
		for i, b := range tokens {
			for _, a := range tokens[:i] {
				if a.end.Before(b.start) && a.token >= b.token {
					t.Errorf("key %q: token %d issued after token %d had been", key, b.token, a.token)
				}
			}
		}
		info, err := newTestLocker(t, admin, &Options{Prefix: prefix, MinTTL: time.Second}).Inspect(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		last := fence.Token(0)
		for _, a := range tokens {
			last = max(last, a.token)
		}
		if info.Token < last {
			t.Errorf("key %q: Inspect shows token %d, below the highest issued %d", key, info.Token, last)
		}
		t.Logf("key %q: %d tokens, last %d", key, len(tokens), last)
	}
}
