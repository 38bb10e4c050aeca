package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/internal/faultlock"
)

// Three candidates on each real store, in real time with a one-second
// lease (the shortest DynamoDB's locker takes). The leader is cut off
// (its calls hang): its safety deadline (TTL minus a 400 ms margin after
// its last renewal was sent) demotes it before the store lets another
// candidate take the key, and another candidate is elected with a higher
// token. Healed, the old leader campaigns as a follower. Then the new
// leader resigns and a third term starts without waiting for expiry.
func TestPartitionedLeaderOnStores(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			testPartitionedLeader(t, s.lockers(t, 3))
		})
	}
}

func testPartitionedLeader(t *testing.T, lockers []fence.Locker) {
	r := newRace(t, lockers, nil, election.Options{
		TTL:           time.Second,
		RetryInterval: 200 * time.Millisecond,
		Guard: guard.Options{
			RenewInterval:  250 * time.Millisecond,
			SafetyMargin:   400 * time.Millisecond,
			CallTimeout:    150 * time.Millisecond,
			ReleaseTimeout: time.Second,
		},
	}, nil)
	r.waitFor("a first leader", func() bool { return r.electedCount() > 0 })
	old := r.lastTerm()

	r.cands[old.id].p.Set(faultlock.Hanging)
	r.waitFor("a second term", func() bool { return r.electedCount() > 1 })
	r.checkSafe() // the old leader was demoted before the new one was elected
	ds := r.demotionsOf(old.id)
	if len(ds) != 1 || !errors.Is(ds[0].cause, fence.ErrLeaseLost) || !errors.Is(ds[0].cause, guard.ErrDeadlinePassed) {
		t.Fatalf("demotions of the old leader %+v, want one by the safety deadline\n%s", ds, r.history())
	}
	second := r.lastTerm()
	if second.id == old.id || second.lease.Token <= old.lease.Token {
		t.Fatalf("second term %+v, want another candidate with a token above %d", second, old.lease.Token)
	}

	r.cands[old.id].p.Set(faultlock.Healthy)
	busy := r.busyCount(old.id)
	r.waitFor("the old leader finding the key busy", func() bool { return r.busyCount(old.id) > busy })
	if r.cands[old.id].c.IsLeader() {
		t.Fatalf("the old leader leads again while the second term runs\n%s", r.history())
	}

	if err := r.cands[second.id].c.Resign(t.Context()); err != nil {
		t.Fatalf("Resign: %v", err)
	}
	r.waitFor("a third term", func() bool { return r.electedCount() > 2 })
	if third := r.lastTerm(); third.id == second.id || third.lease.Token <= second.lease.Token {
		t.Fatalf("third term %+v, want another candidate with a token above %d", third, second.lease.Token)
	}
	r.checkSafe()

	for _, c := range r.cands {
		if err := r.stop(c); !errors.Is(err, context.Canceled) {
			t.Errorf("candidate %d: Campaign returned %v, want context.Canceled", c.id, err)
		}
	}
	info, err := lockers[0].Inspect(t.Context(), r.key)
	if err != nil || info.Held {
		t.Fatalf("after every campaign ended the key is %+v, %v; want it released", info, err)
	}
}
