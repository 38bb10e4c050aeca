package redlock

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestKillOneMasterWhileWorking: holders take, renew and release two keys
// in a loop on three masters; one master is killed with SIGKILL while
// they do, and later comes back empty. Every call succeeds or finds the
// key held, the tokens of each key strictly increase in the order their
// holders got in, and work goes on on the two masters left. With still
// proposals, every token after the first of a key comes from the
// counters the masters report (the second round of an attempt).
func TestKillOneMasterWhileWorking(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		adjust func(*store)
	}{
		{"ClockProposals", nil},
		{"StillProposals", stillProposals},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			killOneMasterWhileWorking(t, c.adjust)
		})
	}
}

func killOneMasterWhileWorking(t *testing.T, adjust func(*store)) {
	ms := startMasters(t, 3, volatile)
	const (
		ttl   = time.Second // renewals every 200 ms keep up on a 2-core machine running the whole suite
		hold  = 3 * ttl     // each job outlives its TTL three times
		renew = ttl / 5
	)
	keys := []string{"job-a", "job-b"}
	var (
		mu       sync.Mutex
		tokens   = map[string][]fence.Token{}
		problems []string
		phase    atomic.Int32 // 0 before the kill, 1 after it, 2 after the restart
		perPhase [3]atomic.Int32
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	for _, key := range keys {
		for range 3 {
			l, d := newStoreLocker(t, ms, nil)
			if adjust != nil {
				adjust(d)
			}
			wg.Go(func() {
				ctx := t.Context()
				for {
					select {
					case <-stop:
						return
					default:
					}
					lease, err := l.Acquire(ctx, key, ttl, nil)
					if errors.Is(err, fence.ErrHeld) {
						time.Sleep(ttl / 10)
						continue
					}
					if err != nil {
						report("Acquire(%q): %v", key, err)
						return
					}
					mu.Lock()
					if seen := tokens[key]; len(seen) > 0 && lease.Token <= seen[len(seen)-1] {
						problems = append(problems, fmt.Sprintf("%q: token %d issued after token %d", key, lease.Token, seen[len(seen)-1]))
					}
					tokens[key] = append(tokens[key], lease.Token)
					mu.Unlock()
					perPhase[phase.Load()].Add(1)
					for end := time.Now().Add(hold); time.Now().Before(end); {
						time.Sleep(renew)
						renewed, err := l.Renew(ctx, lease)
						if err != nil {
							report("Renew(%q, token %d): %v", key, lease.Token, err)
							return
						}
						lease = renewed
					}
					if err := l.Release(ctx, lease); err != nil {
						report("Release(%q, token %d): %v", key, lease.Token, err)
						return
					}
				}
			})
		}
	}
	waitFor := func(p int32, n int32) {
		deadline := time.Now().Add(30 * time.Second)
		for perPhase[p].Load() < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(0, 4)
	ms[0].kill()
	phase.Store(1)
	waitFor(1, 6)
	ms[0].restart(t)
	phase.Store(2)
	waitFor(2, 4)
	close(stop)
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	for p := range perPhase {
		if n := perPhase[p].Load(); n < 4 {
			t.Errorf("phase %d (0: three masters, 1: one killed, 2: restarted empty): %d acquisitions, want at least 4", p, n)
		}
	}
	t.Logf("acquisitions per phase: %d, %d, %d; tokens: %v", perPhase[0].Load(), perPhase[1].Load(), perPhase[2].Load(), tokens)
}

// TestTokensAfterMastersLoseData builds, with masters killed, restarted
// and left down, the states the package doc names, and shows where the
// token argument holds and where it stops. Every locker proposes token 1
// first (stillProposals), so that only the masters' counters can make a
// later token higher.
func TestTokensAfterMastersLoseData(t *testing.T) {
	t.Parallel()
	type step func(t *testing.T, ms []*master)
	kill := func(i int) step { return func(t *testing.T, ms []*master) { ms[i].kill() } }
	restart := func(i int) step { return func(t *testing.T, ms []*master) { ms[i].restart(t) } }
	crash := func(i int) step { return func(t *testing.T, ms []*master) { ms[i].crash(t) } }
	tests := []struct {
		name    string
		p       persistence
		before  []step // before the first lease
		between []step // after its release, before the second Acquire
		repeat  bool   // the second lease gets the first one's token again
	}{
		// Masters that write every change to disk before answering keep
		// the counters across a crash: a quorum of restarted masters
		// still knows the last token.
		{"DurableQuorumCrashes", durable, nil, []step{crash(0), crash(1), kill(2)}, false},
		// A master that comes back empty is outvoted: the one that kept
		// its counter is in every quorum of the two that answer.
		{"OneDownOneEmpty", volatile, nil, []step{kill(2), crash(0)}, false},
		// The first lease is written to masters 0 and 1 (2 is down);
		// 2 comes back empty and 0 crashes and comes back empty; with 1
		// down, the quorum {0, 2} has never seen the token, and issues
		// it again. This is where the argument stops: a quorum of
		// masters without the last token's write.
		{"QuorumWithoutTheLastToken", volatile, []step{kill(2)}, []step{restart(2), crash(0), kill(1)}, true},
		// The same with durable masters: 0 comes back with its counter.
		{"QuorumWithoutTheLastTokenDurable", durable, []step{kill(2)}, []step{restart(2), crash(0), kill(1)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ms := startMasters(t, 3, tt.p)
			ctx := t.Context()
			for _, s := range tt.before {
				s(t, ms)
			}
			first := stillLocker(t, ms)
			lease, err := first.Acquire(ctx, "k", time.Minute, nil)
			if err != nil {
				t.Fatalf("first Acquire: %v", err)
			}
			if err := first.Release(ctx, lease); err != nil {
				t.Fatalf("Release: %v", err)
			}
			t.Logf("first token %d; counters %q", lease.Token, counters(t, ms, DefaultPrefix, "k"))
			for _, s := range tt.between {
				s(t, ms)
			}
			t.Logf("counters after the faults %q", counters(t, ms, DefaultPrefix, "k"))
			second := stillLocker(t, ms)
			next, err := second.Acquire(ctx, "k", time.Minute, nil)
			if err != nil {
				t.Fatalf("second Acquire: %v", err)
			}
			t.Logf("second token %d", next.Token)
			switch {
			case tt.repeat && next.Token != lease.Token:
				t.Errorf("second token %d, want the first one, %d, issued again by a quorum that lost it", next.Token, lease.Token)
			case !tt.repeat && next.Token <= lease.Token:
				t.Errorf("second token %d, want above the first one, %d", next.Token, lease.Token)
			}
		})
	}
}
