package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestLostRace makes Acquire lose the race it cannot see in its snapshot:
// another transaction takes the key and holds it uncommitted while Acquire
// runs, so the statement waits for it (on the row lock, or on the unique
// index for a new key). If that transaction commits, the statement finds
// nothing to update or insert; Acquire must then report the real holder,
// not an error. If it rolls back, Acquire must win.
func TestLostRace(t *testing.T) {
	t.Parallel()
	// Each case holds one connection in the winning transaction, one in
	// the blocked contender and one for polling pg_stat_activity; the
	// cases run one after another so the pool can never run dry (a dry
	// pool would leave the poll waiting for a connection forever).
	pool := newPool(t, 4, nil)
	name := uniqueName("fence_test_")
	l := newLockerOn(t, pool, name)
	for _, tt := range []struct {
		name          string
		newKey, abort bool
	}{
		{"new key, winner commits", true, false},
		{"new key, winner rolls back", true, true},
		{"free key, winner commits", false, false},
		{"free key, winner rolls back", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			key := tt.name
			if !tt.newKey {
				lease, err := l.Acquire(ctx, key, time.Minute, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := l.Release(ctx, lease); err != nil {
					t.Fatal(err)
				}
			}
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(ctx) }()
			inTx, err := New(tx, &Options{Table: name})
			if err != nil {
				t.Fatal(err)
			}
			winner, err := inTx.Acquire(ctx, key, time.Minute, nil)
			if err != nil {
				t.Fatalf("Acquire in the winning transaction: %v", err)
			}

			type result struct {
				lease fence.Lease
				err   error
			}
			done := make(chan result, 1)
			go func() {
				lease, err := l.Acquire(ctx, key, time.Minute, nil)
				done <- result{lease, err}
			}()
			// Wait until the contender is blocked by the winner's transaction.
			for blocked := 0; blocked == 0; {
				err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))",
					tx.Conn().PgConn().PID()).Scan(&blocked)
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Millisecond)
			}
			if tt.abort {
				err = tx.Rollback(ctx)
			} else {
				err = tx.Commit(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := <-done

			if tt.abort {
				if got.err != nil {
					t.Fatalf("contender after the winner rolled back: %v, want the lease", got.err)
				}
				if got.lease.Token != winner.Token {
					t.Errorf("contender's token %d, want %d (the rolled-back one was never issued)", got.lease.Token, winner.Token)
				}
				return
			}
			var held *fence.HeldError
			if !errors.As(got.err, &held) {
				t.Fatalf("contender after the winner committed: %v, want a *fence.HeldError", got.err)
			}
			if held.Owner != winner.Owner || held.Token != winner.Token || held.ValidUntil.IsZero() {
				t.Errorf("HeldError = %+v, want holder %q token %d with an expiry", held, winner.Owner, winner.Token)
			}
		})
	}
}
