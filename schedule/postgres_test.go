package schedule_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/internal/faultlock"
	"github.com/fencekit/fence/internal/testenv"
	"github.com/fencekit/fence/lockers/postgres"
	"github.com/fencekit/fence/schedule"
)

// postgresLockers returns n Lockers on one lease table of a unique name,
// each with a connection pool of its own like separate replicas. clock
// (nil: the system clock) supplies their send times. The table is dropped
// when the test ends.
func postgresLockers(t *testing.T, n int, clock fence.Clock) []fence.Locker {
	t.Helper()
	url := testenv.PostgresURL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	table := "fence_schedule_" + hex.EncodeToString(b[:])
	lockers := make([]fence.Locker, n)
	for i := range lockers {
		cfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			t.Fatalf("parse FENCE_POSTGRES_URL: %v", err)
		}
		cfg.MaxConns = 2
		pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(pool.Close)
		l, err := postgres.New(pool, &postgres.Options{Table: table, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := l.CreateTable(t.Context()); err != nil {
				t.Fatalf("CreateTable: %v", err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+l.QuotedTable()); err != nil {
					t.Errorf("drop table: %v", err)
				}
			})
		}
		lockers[i] = l
	}
	return lockers
}

// The windows and holds are timed by a fake clock; the leases by the
// server, which lets none expire here (the fake minutes pass in
// milliseconds of real time).
func TestPostgresEachWindowOnce(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(start)
	testEachWindowOnce(t, clock, postgresLockers(t, 3, clock))
}

// In real time with one-second windows and a 400 ms lease: the replica
// that runs a window first dies mid-job (its calls hang from then on). Its
// lease is lost by the safety deadline; a later window runs on another
// replica with a higher token, and no window runs twice.
func TestPostgresDeadReplica(t *testing.T) {
	t.Parallel()
	var died = make(chan int, 1)
	f := newFarm(t, postgresLockers(t, 3, nil), nil, nil, time.Second, schedule.Options{
		LockAtMostFor: 400 * time.Millisecond,
		Guard: guard.Options{
			RenewInterval:  100 * time.Millisecond,
			SafetyMargin:   100 * time.Millisecond,
			CallTimeout:    100 * time.Millisecond,
			ReleaseTimeout: 200 * time.Millisecond,
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
