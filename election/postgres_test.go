package election_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/internal/faultlock"
	"github.com/fencekit/fence/internal/testenv"
	"github.com/fencekit/fence/lockers/postgres"
)

// postgresLockers returns n Lockers on one lease table of a unique name,
// each with a connection pool of its own like separate replicas. The
// table is dropped when the test ends.
func postgresLockers(t *testing.T, n int) []fence.Locker {
	t.Helper()
	url := testenv.PostgresURL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	table := "fence_election_" + hex.EncodeToString(b[:])
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
		l, err := postgres.New(pool, &postgres.Options{Table: table})
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

// Three candidates on PostgreSQL, in real time with a one-second lease.
// The leader is cut off (its calls hang): its safety deadline (TTL minus
// a 400 ms margin after its last renewal was sent) demotes it before the
// server lets the lease expire, and another candidate is elected with a
// higher token. Healed, the old leader campaigns as a follower. Then the
// new leader resigns and a third term starts without waiting for expiry.
func TestPostgresPartitionedLeader(t *testing.T) {
	t.Parallel()
	lockers := postgresLockers(t, 3)
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
