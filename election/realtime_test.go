package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/internal/testing/faultlock"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// Three candidates on each store, in real time with the store's lease
// (see onBackends). The leader is cut off (its calls hang): its safety
// deadline (0.6 TTL after its last renewal was sent) demotes it before
// the store lets another candidate take the key, and another candidate is
// elected with a higher token. Healed, the old leader campaigns as a
// follower. Then the new leader resigns and a third term starts without
// waiting for expiry.
func TestPartitionedLeaderOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		testPartitionedLeader(t, b.Lockers(t, 3, nil), ttl)
	})
}

func testPartitionedLeader(t *testing.T, lockers []*fence.Locker, ttl time.Duration) {
	so, opts := realTimeOptions(ttl)
	r := newRace(t, lockers, nil, so, opts, nil)
	r.patience = patience(ttl)
	r.waitFor("a first leader", func() bool { return r.electedCount() > 0 })
	old := r.lastTerm()

	r.cands[old.id].p.Set(faultlock.Hanging)
	r.waitFor("a second term", func() bool { return r.electedCount() > 1 })
	r.checkSafe() // the old leader was demoted before the new one was elected
	ds := r.demotionsOf(old.id)
	if len(ds) != 1 || !errors.Is(ds[0].cause, fence.ErrLeaseLost) || !errors.Is(ds[0].cause, fence.ErrDeadlinePassed) {
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

// Three candidates on each store, in real time with the store's lease.
// The leader leads for more than two TTLs, renewing all along, so the
// lease it was elected with has run out long before: Leader hands out the
// term's handle, whose lease is the last renewal, still valid. Then it resigns: the key is released
// at once (a release refused because of an expired copy would leave it
// taken until the lease ran out, or for a whole TTL of watching on the
// clock-free stores), and a follower leads within TTL/4 of Resign
// returning, long before the lease would have expired.
func TestResignHandsOverOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, ttl time.Duration) {
		testResignHandsOver(t, b.Lockers(t, 3, nil), ttl)
	})
}

func testResignHandsOver(t *testing.T, lockers []*fence.Locker, ttl time.Duration) {
	so, opts := realTimeOptions(ttl)
	so.SafetyMargin = ttl / 4 // no partition here: leave renewals room
	r := newRace(t, lockers, nil, so, opts, nil)
	r.patience = patience(ttl)
	r.waitFor("a first leader", func() bool { return r.electedCount() > 0 })
	first := r.lastTerm()
	leader := r.cands[first.id]

	time.Sleep(time.Until(first.at.Add(2*ttl + ttl/4)))
	if n := r.electedCount(); n != 1 || !leader.c.IsLeader() {
		t.Fatalf("%d terms after two TTLs, leader still leading: %v; want the first term running\n%s", n, leader.c.IsLeader(), r.history())
	}
	renewals := r.renewalsOf(first.id, first.lease.Token)
	if len(renewals) < 4 {
		t.Fatalf("%d renewals in two TTLs, want at least 4\n%s", len(renewals), r.history())
	}
	last := renewals[len(renewals)-1]
	h, ok := leader.c.Leader()
	if !ok {
		t.Fatalf("Leader reports no term\n%s", r.history())
	}
	switch lease := h.Lease(); {
	case h != first.h:
		t.Fatalf("Leader returned %p, not the term's handle %p", h, first.h)
	case lease.Key != first.lease.Key || lease.Owner != first.lease.Owner || lease.Token != first.lease.Token:
		t.Fatalf("Leader returned %+v, not a copy of the term's lease %+v", lease, first.lease)
	case lease.ValidUntil.Before(last.ValidUntil) || !lease.ValidUntil.After(time.Now()):
		t.Fatalf("Leader returned a lease valid until %v, before the last renewal's %v or now: a stale copy", lease.ValidUntil, last.ValidUntil)
	}
	if !first.lease.ValidUntil.Before(time.Now()) {
		t.Fatalf("the lease as elected is valid until %v, not yet past: the leader has not led long enough", first.lease.ValidUntil)
	}

	if err := leader.c.Resign(t.Context()); err != nil {
		t.Fatalf("Resign: %v", err)
	}
	resigned := time.Now()
	info, err := lockers[(first.id+1)%len(lockers)].Inspect(t.Context(), r.key)
	if err != nil || info.Held && info.Token <= first.lease.Token {
		t.Fatalf("right after Resign the key is %+v, %v; want it released", info, err)
	}
	if rs := r.releasesOf(first.id); len(rs) != 1 || rs[0].err != nil || rs[0].lease.Token != first.lease.Token {
		t.Fatalf("releases of the leader %+v, want one of token %d without error\n%s", rs, first.lease.Token, r.history())
	}
	if ls := r.lossesOf(first.id); len(ls) != 0 {
		t.Fatalf("the leader lost its lease: %+v\n%s", ls, r.history())
	}
	ds := r.demotionsOf(first.id)
	if len(ds) != 1 || !errors.Is(ds[0].cause, election.ErrResigned) || ds[0].lease.ValidUntil.Before(last.ValidUntil) {
		t.Fatalf("demotions of the leader %+v, want one caused by ErrResigned, with the lease as last renewed", ds)
	}

	for r.electedCount() < 2 && time.Since(resigned) < ttl {
		time.Sleep(time.Millisecond)
	}
	if r.electedCount() < 2 {
		t.Fatalf("no follower led within a TTL (%v) of Resign returning\n%s", ttl, r.history())
	}
	next := r.lastTerm()
	took := next.at.Sub(resigned)
	if took >= ttl/4 {
		t.Fatalf("a follower led %v after Resign returned, want within TTL/4 (%v)\n%s", took, ttl/4, r.history())
	}
	if next.id == first.id || next.lease.Token <= first.lease.Token {
		t.Fatalf("term after the resignation %+v, want another candidate with a token above %d", next, first.lease.Token)
	}
	r.checkSafe()
	t.Logf("leader renewed %d times in %v, a follower led %v after Resign", len(renewals), resigned.Sub(first.at), took)
}
