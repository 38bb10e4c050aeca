package schedule_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/testing/faultlock"
	"github.com/fencekit/fence/internal/testing/testlockers"
	"github.com/fencekit/fence/schedule"
)

// The lagging replicas of testEachWindowOnce on every store. The windows
// and holds are timed by a fake clock, and so are the leases of memory
// and of the clock-free stores' observations; the servers time their own
// leases, which let none expire here (the fake minutes pass in a few
// seconds of real time, and 20 s leases are within every store's range).
// No lease expires on any store: every lock is released by its holder.
func TestEachWindowOnce(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, _ time.Duration) {
		clock := clocktest.New(start)
		testEachWindowOnce(t, clock, b.Lockers(t, 3, clock))
	})
}

// On every store, in real time with the store's lease L and windows of
// 2.5 L, the first starting as the test does: the replica that runs it
// dies mid-job (its calls hang from then on). Its lease is lost by the
// safety deadline; the next window runs on another replica with a higher
// token, and no window runs twice.
func TestDeadReplicaOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, lease time.Duration) {
		testDeadReplica(t, b.Lockers(t, 3, nil), lease)
	})
}

func testDeadReplica(t *testing.T, lockers []*fence.Locker, lease time.Duration) {
	var died = make(chan int, 1)
	interval := lease * 5 / 2
	f := newFarm(t, lockers, nil, nil, interval, fence.SessionOptions{
		TTL:            lease,
		RenewInterval:  lease / 3, // Cloud Storage's MinRenewInterval at its MinTTL
		SafetyMargin:   lease / 4,
		CallTimeout:    lease / 4,
		ReleaseTimeout: lease / 2,
	}, schedule.Options{
		Offset: offsetNow(interval),
	}, func(f *farm, r *replica, ctx context.Context, _ *fence.Handle) error {
		select {
		case died <- r.id:
			r.p.Set(faultlock.Hanging)
			<-ctx.Done()
			return context.Cause(ctx)
		default:
			return nil
		}
	})
	f.patience = patience(lease)
	f.start()
	var dead int
	select {
	case dead = <-died:
	case <-time.After(f.patience):
		t.Fatalf("no window ran\n%s", f.history())
	}
	var first run
	f.waitFor("a window run by a live replica after the death", func() bool {
		ws := f.windows()
		if len(ws) == 0 {
			return false
		}
		first = f.runsOf(ws[0])[0]
		return len(ws) > 1
	})
	f.stopAll()
	f.checkAtMostOnce()
	if first.id != dead {
		t.Fatalf("the first run was by replica %d, not by the one that died (%d)", first.id, dead)
	}
	for _, w := range f.windows()[1:] {
		if r := f.runsOf(w)[0]; r.id == dead {
			t.Fatalf("window %v ran on the dead replica\n%s", w, f.history())
		}
	}
	es := f.attemptsOf(dead, first.window)
	if len(es) != 1 || es[0].Outcome != schedule.Ran || !errors.Is(es[0].Err, fence.ErrLeaseLost) {
		t.Fatalf("the dead replica's attempts at its window: %+v, want a run that lost its lease", es)
	}
}

// On every store, in real time with the store's lease L: a job that
// finishes at once, with LockAtLeastFor 2.5 L, keeps the lock for those
// 2.5 L by renewing it, then releases it without error (a release refused
// because of the copy of the lease the run started with, expired after
// L, would show as a lost lease and leave the key taken). Three replicas
// attempt the window together: one runs it; the others, and later
// attempts during the hold, find the lock busy; attempts after the hold
// find the window done.
func TestLockAtLeastForOverTTLOnStores(t *testing.T) {
	t.Parallel()
	testlockers.Run(t, func(t *testing.T, b testlockers.Backend, lease time.Duration) {
		testLockAtLeastForOverTTL(t, b.Lockers(t, 3, nil), lease)
	})
}

func testLockAtLeastForOverTTL(t *testing.T, lockers []*fence.Locker, lease time.Duration) {
	atLeast := lease * 5 / 2
	interval := 4 * lease // the hold ends well within the window
	started := make(chan time.Time, 1)
	f := newFarm(t, lockers, nil, nil, interval, fence.SessionOptions{TTL: lease}, schedule.Options{
		LockAtLeastFor: atLeast,
		Offset:         offsetNow(interval),
	}, func(*farm, *replica, context.Context, *fence.Handle) error {
		started <- time.Now()
		return nil
	})
	f.patience = patience(lease)
	type result struct {
		id  int
		out schedule.Outcome
		err error
		at  time.Time
	}
	results := make(chan result, len(f.reps))
	launched := time.Now()
	for _, r := range f.reps {
		go func() {
			out, err := r.job.Attempt(t.Context())
			results <- result{r.id, out, err, time.Now()}
		}()
	}
	var runStart time.Time
	select {
	case runStart = <-started:
	case <-time.After(f.patience):
		t.Fatalf("no replica ran the window\n%s", f.history())
	}
	ws := f.windows()
	if len(ws) != 1 {
		t.Fatalf("windows run: %v, want one", ws)
	}
	w := ws[0]
	runner := f.runsOf(w)[0]
	for range len(f.reps) - 1 {
		if r := <-results; r.id == runner.id || r.out != schedule.Busy || r.err != nil {
			t.Fatalf("replica %d's attempt beside the run: %v, %v; want busy\n%s", r.id, r.out, r.err, f.history())
		}
	}
	other := f.reps[(runner.id+1)%len(f.reps)]

	// During the hold: the lock is held under the run's token and busy.
	for time.Since(runStart) < atLeast-lease/2 {
		info, err := other.p.Locker().Inspect(t.Context(), f.name)
		if err != nil || !info.Held || info.Token != runner.lease.Token {
			t.Fatalf("%v into the hold the lock is %+v, %v; want it held with token %d\n%s", time.Since(runStart), info, err, runner.lease.Token, f.history())
		}
		if out, err := other.job.Attempt(t.Context()); out != schedule.Busy || err != nil {
			t.Fatalf("%v into the hold another replica's attempt: %v, %v; want busy\n%s", time.Since(runStart), out, err, f.history())
		}
		time.Sleep(lease / 2)
	}

	var r result
	select {
	case r = <-results:
	case <-time.After(f.patience):
		t.Fatalf("the run's attempt did not return\n%s", f.history())
	}
	if r.id != runner.id || r.out != schedule.Ran || r.err != nil {
		t.Fatalf("the run's attempt: replica %d %v, %v; want replica %d ran without error\n%s", r.id, r.out, r.err, runner.id, f.history())
	}
	if held := r.at.Sub(launched); held < atLeast {
		t.Fatalf("the run's attempt returned %v after it began, before LockAtLeastFor (%v)", held, atLeast)
	}
	if info, err := other.p.Locker().Inspect(t.Context(), f.name); err != nil || info.Held {
		t.Fatalf("after the hold the lock is %+v, %v; want it released", info, err)
	}
	rels := f.releasesOf(runner.id)
	if len(rels) != 1 || rels[0].Err != nil || rels[0].Held < atLeast || rels[0].Lease.Token != runner.lease.Token {
		t.Fatalf("the run's releases %+v, want one of token %d without error after at least %v", rels, runner.lease.Token, atLeast)
	}
	if ls := f.allLosses(); len(ls) != 0 {
		t.Fatalf("leases lost: %+v\n%s", ls, f.history())
	}
	if n := f.renewalsOf(runner.id); n < 5 {
		t.Fatalf("%d renewals in a hold of %v with a lease of %v, want at least 5", n, atLeast, lease)
	}
	if out, err := other.job.Attempt(t.Context()); out != schedule.Done || err != nil {
		t.Fatalf("another replica's attempt after the hold: %v, %v; want done\n%s", out, err, f.history())
	}
	if now := time.Now(); !w.Equal(other.job.Window(now)) {
		t.Fatalf("the test outlasted its window %v (now %v)", w, now)
	}
	f.checkAtMostOnce()
}
