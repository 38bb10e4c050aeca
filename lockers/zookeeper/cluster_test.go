package zookeeper

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/zktest"
)

// issued is a token a holder got, and when its Acquire started and ended.
type issued struct {
	token      fence.Token
	start, end time.Time
	holder     int
}

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
	ls, err := fence.NewSession(long.Locker, &fence.SessionOptions{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ls.Close(context.Background()) })
	held, err := ls.Lock(t.Context(), "long", nil)
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	got := map[string][]issued{}
	var phase atomic.Int32 // 0 before the kill, 1 after it, 2 after the restart
	var wins [3]atomic.Int32
	var stopped atomic.Bool
	var wg sync.WaitGroup
	var longWins []time.Time // contenders' wins of "long", when their Acquire returned
	for h := range holders {
		l := newTestLocker(t, connect(t, servers, session), opts)
		wg.Go(func() {
			for i := 0; !stopped.Load(); i++ {
				if i%4 == 3 {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					lease, err := l.Acquire(ctx, "long", ttl, nil)
					cancel()
					if err == nil {
						mu.Lock()
						longWins = append(longWins, time.Now())
						mu.Unlock()
						_ = l.Release(context.Background(), lease)
					}
					continue
				}
				key := keys[(h+i)%len(keys)]
				owner := fence.NewOwnerID()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				start := time.Now()
				lease, err := l.Acquire(ctx, key, ttl, &fence.AcquireOptions{Owner: owner})
				end := time.Now()
				cancel()
				if err != nil && !errors.Is(err, fence.ErrHeld) {
					// The answer may have been lost: a lease won by this
					// attempt shows its owner.
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
				if err == nil {
					rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
					_ = l.Release(rctx, lease)
					rcancel()
				}
			}
		})
	}
	time.Sleep(2 * time.Second)
	old := e.Leader(t)
	e.Kill(t, old)
	phase.Store(1)
	t.Logf("killed the leader, server %d", old)
	time.Sleep(3 * ttl)
	now := e.Leader(t)
	if now == old {
		t.Fatalf("the killed server %d still leads", old)
	}
	e.Restart(t, old)
	phase.Store(2)
	t.Logf("the new leader is server %d; restarted server %d", now, old)
	time.Sleep(2 * ttl)
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
		slices.SortFunc(tokens, func(a, b issued) int { return a.start.Compare(b.start) })
		for i, b := range tokens {
			for _, a := range tokens[:i] {
				if a.end.Before(b.start) && a.token >= b.token {
					t.Errorf("key %q: token %d issued after token %d had been", key, b.token, a.token)
				}
			}
		}
		t.Logf("key %q: %d tokens", key, len(tokens))
	}

	// The long holder: kept across the failover, or lost, and then only
	// after its last renewal ran out.
	until := held.Lease().ValidUntil
	lost := held.Err()
	t.Logf("long holder: error %v, valid until %v; %d contender wins", lost, until.Format(time.StampMilli), len(longWins))
	for _, w := range longWins {
		if w.Before(until) {
			t.Errorf("a contender got the long holder's key at %v, before its lease ran out at %v", w.Format(time.StampMilli), until.Format(time.StampMilli))
		}
	}
	if lost == nil {
		if len(longWins) > 0 {
			t.Errorf("contenders got the key %d times while the long holder still held it", len(longWins))
		}
		info, err := long.Inspect(t.Context(), "long")
		if err != nil || !info.Held || info.Token != held.Token() {
			t.Errorf("Inspect of the long holder's key = %+v, %v; want held with token %d", info, err, held.Token())
		}
	}
}
