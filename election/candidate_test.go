package election_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/internal/testing/faultlock"
	"github.com/fencekit/fence/lockers/memory"
)

var epoch = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// Memory tests run on a fake clock: TTL 30 s, renewals every 10 s, safety
// margin 3 s, retries every 2-4 s, holdoff 8 s. Steps of 1 s are shorter
// than the safety margin, so a leader's deadline passes at least one step
// before its lease expires in the store.
const (
	testTTL   = 30 * time.Second
	testRetry = 4 * time.Second
	tick      = time.Second
)

func memoryRace(t *testing.T, n int, fn func(*race) election.Func) (*race, *fence.Locker) {
	t.Helper()
	clock := clocktest.New(epoch)
	store := memory.New(&memory.Options{Clock: clock})
	lockers := make([]*fence.Locker, n)
	for i := range lockers {
		lockers[i] = store // one store, as if each replica had its own client of it
	}
	r := newRace(t, lockers, clock, fence.SessionOptions{TTL: testTTL}, election.Options{RetryInterval: testRetry}, fn)
	r.stepUntil(tick, 10, "a first leader", func() bool { return r.electedCount() > 0 })
	return r, store
}

// newSession returns a session on l with opts.
func newSession(t *testing.T, l *fence.Locker, opts *fence.SessionOptions) *fence.Session {
	t.Helper()
	s, err := fence.NewSession(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOneLeaderAtATime(t *testing.T) {
	t.Parallel()
	r, store := memoryRace(t, 3, nil)
	for range 4 * int(testTTL/tick) { // four TTLs: many renewals, many follower attempts
		r.step(tick)
		if got := r.leaders(); len(got) != 1 {
			t.Fatalf("leaders %v, want exactly one\n%s", got, r.history())
		}
	}
	if n := r.electedCount(); n != 1 {
		t.Fatalf("%d terms, want 1: a healthy leader keeps its lease\n%s", n, r.history())
	}
	first := r.lastTerm()
	info, err := store.Inspect(t.Context(), r.key)
	if err != nil || !info.Held || info.Token != first.lease.Token || info.Owner != first.lease.Owner {
		t.Fatalf("store shows %+v, %v; want the leader's lease %+v", info, err, first.lease)
	}
	for _, c := range r.cands {
		if c.id != first.id && r.busyCount(c.id) == 0 {
			t.Errorf("follower %d never tried the busy key", c.id)
		}
	}
	r.checkSafe()
}

func TestBreakElectsHigherToken(t *testing.T) {
	t.Parallel()
	r, store := memoryRace(t, 3, nil)
	old := r.lastTerm()
	if err := store.Break(t.Context(), r.key); err != nil {
		t.Fatal(err)
	}
	r.stepUntil(tick, int(testTTL/tick), "old leader demoted and a new term", func() bool {
		return len(r.demotionsOf(old.id)) > 0 && r.electedCount() >= 2
	})
	d := r.demotionsOf(old.id)[0]
	if !errors.Is(d.cause, fence.ErrLeaseLost) || !errors.Is(d.cause, fence.ErrNotHeld) {
		t.Errorf("demotion cause %v, want a lease loss matching ErrNotHeld", d.cause)
	}
	if next := r.lastTerm(); next.lease.Token <= old.lease.Token {
		t.Errorf("term after the break has token %d, not above %d", next.lease.Token, old.lease.Token)
	}
	// After a break two candidates may have believed they led for a
	// moment (that is what tokens are for); from now on there is one.
	r.run(testTTL)
	if got := r.leaders(); len(got) != 1 {
		t.Fatalf("leaders %v, want exactly one\n%s", got, r.history())
	}
}

func TestResignHandsOverWithoutExpiry(t *testing.T) {
	t.Parallel()
	r, store := memoryRace(t, 3, nil)
	for round := range 4 {
		old := r.lastTerm()
		terms := r.electedCount()
		if err := r.cands[old.id].c.Resign(t.Context()); err != nil {
			t.Fatalf("round %d: Resign: %v", round, err)
		}
		if r.cands[old.id].c.IsLeader() {
			t.Fatalf("round %d: still leader after Resign", round)
		}
		info, err := store.Inspect(t.Context(), r.key)
		if err != nil || info.Held {
			t.Fatalf("round %d: after Resign the key is %+v, %v; want it released", round, info, err)
		}
		ds := r.demotionsOf(old.id)
		if len(ds) == 0 || !errors.Is(ds[len(ds)-1].cause, election.ErrResigned) {
			t.Fatalf("round %d: demotions %+v, want the last caused by ErrResigned", round, ds)
		}
		took := r.stepUntil(tick, int(testTTL/tick), "a new leader", func() bool { return r.electedCount() > terms })
		if took > testRetry {
			t.Errorf("round %d: hand-over took %v of clock, more than one retry interval (%v)", round, took, testRetry)
		}
		if next := r.lastTerm(); next.id == old.id {
			t.Errorf("round %d: candidate %d resigned and was elected again before the others", round, old.id)
		}
	}
	r.checkSafe()
}

// Leader hands out the term's handle, the one the leader's function got,
// kept current: its lease is the last renewal, not the lease the term
// started with, whose ValidUntil passes after one TTL; the demotion
// reports it too.
func TestLeaderIsLastRenewal(t *testing.T) {
	t.Parallel()
	r, _ := memoryRace(t, 2, nil)
	first := r.lastTerm()
	leader := r.cands[first.id].c
	r.run(2*testTTL + tick)
	renewals := r.renewalsOf(first.id, first.lease.Token)
	if len(renewals) < 6 {
		t.Fatalf("%d renewals in two TTLs, want 6", len(renewals))
	}
	last := renewals[len(renewals)-1]
	h, ok := leader.Leader()
	if !ok || h != first.h {
		t.Fatalf("Leader: %p, %v; want the term's handle %p", h, ok, first.h)
	}
	if lease := h.Lease(); lease != last || !lease.ValidUntil.After(r.clock.Now()) {
		t.Fatalf("Leader's lease: %+v; want the last renewal %+v, valid after %v", lease, last, r.clock.Now())
	}
	if !first.lease.ValidUntil.Before(r.clock.Now()) {
		t.Fatalf("the lease as elected is valid until %v, not past %v", first.lease.ValidUntil, r.clock.Now())
	}
	if err := leader.Resign(t.Context()); err != nil {
		t.Fatal(err)
	}
	ds := r.demotionsOf(first.id)
	if len(ds) != 1 || ds[0].lease != last {
		t.Fatalf("demotions %+v, want one with the last renewal %+v", ds, last)
	}
	if rs := r.releasesOf(first.id); len(rs) != 1 || rs[0].err != nil {
		t.Fatalf("releases %+v, want one without error", rs)
	}
}

func TestResignWhenFollowing(t *testing.T) {
	t.Parallel()
	r, _ := memoryRace(t, 2, nil)
	follower := r.cands[1-r.lastTerm().id]
	if err := follower.c.Resign(t.Context()); err != nil {
		t.Fatalf("Resign of a follower: %v", err)
	}
	r.run(testTTL)
	if n := r.electedCount(); n != 1 {
		t.Fatalf("%d terms after a follower resigned, want 1\n%s", n, r.history())
	}
}

func TestCancelReleasesAtOnce(t *testing.T) {
	t.Parallel()
	r, store := memoryRace(t, 3, nil)
	old := r.lastTerm()
	if err := r.stop(r.cands[old.id]); !errors.Is(err, context.Canceled) {
		t.Fatalf("Campaign returned %v, want context.Canceled", err)
	}
	if info, err := store.Inspect(t.Context(), r.key); err != nil || info.Held {
		t.Fatalf("after the campaign ended the key is %+v, %v; want it released", info, err)
	}
	took := r.stepUntil(tick, int(testTTL/tick), "a new leader", func() bool { return r.electedCount() > 1 })
	if took > testRetry {
		t.Errorf("hand-over took %v of clock, more than one retry interval (%v)", took, testRetry)
	}
	ds := r.demotionsOf(old.id)
	if len(ds) != 1 || !errors.Is(ds[0].cause, context.Canceled) {
		t.Errorf("demotions %+v, want one caused by context.Canceled", ds)
	}
	r.checkSafe()
}

// A leader cut off from the store is demoted by its safety deadline,
// before its lease expires in the store and a follower is elected; after
// the partition heals it campaigns again and finds the key busy.
func TestPartitionedLeaderStepsDownFirst(t *testing.T) {
	t.Parallel()
	r, _ := memoryRace(t, 3, nil)
	old := r.lastTerm()
	r.run(15 * tick) // a renewal or two first
	r.cands[old.id].p.Set(faultlock.Failing)
	r.stepUntil(tick, 2*int(testTTL/tick), "a new leader", func() bool { return r.electedCount() > 1 })
	r.checkSafe() // the old leader was demoted before the new one was elected

	ds := r.demotionsOf(old.id)
	if len(ds) != 1 || !errors.Is(ds[0].cause, fence.ErrLeaseLost) || !errors.Is(ds[0].cause, fence.ErrDeadlinePassed) {
		t.Fatalf("demotions %+v, want one by the safety deadline", ds)
	}
	if next := r.lastTerm(); next.id == old.id || next.lease.Token <= old.lease.Token {
		t.Fatalf("new term %+v, want another candidate with a token above %d", next, old.lease.Token)
	}
	r.run(testRetry) // the old leader campaigns while still cut off
	if !anyFailure(r.attemptFailuresOf(old.id), faultlock.ErrPartitioned) {
		t.Errorf("the partitioned candidate reported no failed attempt: %v", r.attemptFailuresOf(old.id))
	}

	r.cands[old.id].p.Set(faultlock.Healthy)
	busy := r.busyCount(old.id)
	r.stepUntil(tick, 3*int(testRetry/tick), "the old leader finding the key busy", func() bool { return r.busyCount(old.id) > busy })
	r.run(testTTL)
	if r.cands[old.id].c.IsLeader() || r.electedCount() != 2 {
		t.Fatalf("after healing: old leader leads %v, %d terms; want a follower and 2 terms\n%s",
			r.cands[old.id].c.IsLeader(), r.electedCount(), r.history())
	}
	r.checkSafe()
}

// A leader whose function returns ends its term and holds off before
// campaigning again; an error it returns is reported.
func TestLeaderReturning(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	first := true
	fn := func(r *race) election.Func {
		return func(ctx context.Context, term *fence.Handle) error {
			if first { // only the first term returns; terms never overlap on one candidate
				first = false
				return boom
			}
			return r.lead(ctx, term)
		}
	}
	r, _ := memoryRace(t, 1, fn)
	took := r.stepUntil(tick, 4*int(testRetry/tick), "a second term", func() bool { return r.electedCount() > 1 })
	if took < 2*testRetry {
		t.Errorf("campaigned again after %v of clock, before the holdoff of %v", took, 2*testRetry)
	}
	ds := r.demotionsOf(0)
	if len(ds) != 1 || !errors.Is(ds[0].cause, election.ErrReturned) {
		t.Errorf("demotions %+v, want one caused by ErrReturned", ds)
	}
	if fs := r.failuresOf(0); len(fs) != 1 || !errors.Is(fs[0], boom) {
		t.Errorf("failures %v, want the leader's error", fs)
	}
	r.checkSafe()
}

func TestPanicReleases(t *testing.T) {
	t.Parallel()
	store := memory.New(nil)
	c, err := election.New(newSession(t, store, nil), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the leader's panic", p)
			}
		}()
		_ = c.Campaign(t.Context(), func(context.Context, *fence.Handle) error { panic("boom") })
	}()
	if info, err := store.Inspect(t.Context(), "k"); err != nil || info.Held {
		t.Fatalf("after a panic the key is %+v, %v; want it released", info, err)
	}
	if c.IsLeader() {
		t.Fatal("still leader after the panic")
	}
	if err := c.Resign(t.Context()); err != nil {
		t.Fatalf("Resign after the panic: %v", err)
	}
}

func TestCampaignRejects(t *testing.T) {
	t.Parallel()
	store := memory.New(nil)
	tests := []struct {
		name string
		key  string
		so   *fence.SessionOptions
		fn   election.Func
	}{
		{"nil function", "k", nil, nil},
		{"key too long for the locker", strings.Repeat("k", memory.MaxKeyLen+1), nil, lead},
		{"TTL too long for the locker", "k", &fence.SessionOptions{TTL: 2 * memory.MaxTTL}, lead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := election.New(newSession(t, store, tt.so), tt.key, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Campaign(t.Context(), tt.fn); !errors.Is(err, fence.ErrInvalid) {
				t.Fatalf("Campaign: %v, want ErrInvalid", err)
			}
		})
	}
}

// Closing the session ends the running term (its lease released, the
// leader's context cancelled with fence.ErrReleased) and the campaign,
// with an error matching fence.ErrSessionClosed.
func TestSessionCloseEndsCampaign(t *testing.T) {
	t.Parallel()
	store := memory.New(nil)
	sess := newSession(t, store, nil)
	c, err := election.New(sess, "k", &election.Options{RetryInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	elected := make(chan struct{})
	var cause error
	done := make(chan error, 1)
	go func() {
		done <- c.Campaign(t.Context(), func(ctx context.Context, _ *fence.Handle) error {
			close(elected)
			<-ctx.Done()
			cause = context.Cause(ctx)
			return cause
		})
	}()
	<-elected
	if err := sess.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-done; !errors.Is(err, fence.ErrSessionClosed) {
		t.Fatalf("Campaign: %v, want ErrSessionClosed", err)
	}
	if !errors.Is(cause, fence.ErrReleased) {
		t.Errorf("the leader's cause: %v, want ErrReleased", cause)
	}
	if info, err := store.Inspect(t.Context(), "k"); err != nil || info.Held {
		t.Fatalf("after Close the key is %+v, %v; want it released", info, err)
	}
	if c.IsLeader() {
		t.Fatal("still leader after Close")
	}
}

func TestCampaignOnceAtATime(t *testing.T) {
	t.Parallel()
	c, err := election.New(newSession(t, memory.New(nil), nil), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	elected := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- c.Campaign(ctx, func(ctx context.Context, term *fence.Handle) error {
			close(elected)
			return lead(ctx, term)
		})
	}()
	<-elected
	if err := c.Campaign(ctx, lead); !errors.Is(err, election.ErrCampaigning) {
		t.Errorf("second Campaign: %v, want ErrCampaigning", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Campaign: %v, want context.Canceled", err)
	}
}
