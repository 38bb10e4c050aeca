package schedule_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/internal/faultlock"
	"github.com/fencekit/fence/schedule"
)

// The lagging replicas of TestEachWindowOnce on each real store. The
// windows and holds are timed by a fake clock, and so are the DynamoDB
// leases; PostgreSQL's leases are timed by the server, which lets none
// expire here (the fake minutes pass in milliseconds of real time). No
// lease expires on either: every lock is released by its holder.
func TestEachWindowOnceOnStores(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			clock := clocktest.New(start)
			testEachWindowOnce(t, clock, s.lockers(t, 3, clock))
		})
	}
}

// On each real store, in real time with the store's shortest lease L and
// windows of 2.5 L: the replica that runs a window first dies mid-job (its
// calls hang from then on). Its lease is lost by the safety deadline; a
// later window runs on another replica with a higher token, and no window
// runs twice.
func TestDeadReplicaOnStores(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			testDeadReplica(t, s.lockers(t, 3, nil), s.lease)
		})
	}
}

func testDeadReplica(t *testing.T, lockers []fence.Locker, lease time.Duration) {
	var died = make(chan int, 1)
	f := newFarm(t, lockers, nil, nil, lease*5/2, schedule.Options{
		LockAtMostFor: lease,
		Guard: guard.Options{
			RenewInterval:  lease / 4,
			SafetyMargin:   lease / 4,
			CallTimeout:    lease / 4,
			ReleaseTimeout: lease / 2,
		},
	}, func(f *farm, r *replica, ctx context.Context, _ fence.Lease) error {
		select {
		case died <- r.id:
			r.p.Set(faultlock.Hanging)
			<-ctx.Done()
			return context.Cause(ctx)
		default:
			return nil
		}
	})
	f.start()
	var dead int
	select {
	case dead = <-died:
	case <-time.After(30 * time.Second):
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
