package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// TestOldTable: a lease table made without the value columns (by an
// earlier version) keeps working for every call but Publish, whose error
// says to run Create and matches ErrStoreMissing; Create then adds the
// columns, also when replicas run it at once, and Publish works.
func TestOldTable(t *testing.T) {
	t.Parallel()
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			pool := newPool(t, 2, nil)
			name := uniqueName("fence_test_")
			quoted := `"` + name + `"`
			mustExec(t, pool, `CREATE TABLE `+quoted+` (key text PRIMARY KEY, owner text NOT NULL, token bigint NOT NULL, expires_at timestamptz)`)
			t.Cleanup(func() { dropTable(t, pool, quoted) })
			l := w.locker(t, name, 2)
			ctx := t.Context()
			lease, err := l.Acquire(ctx, "k", time.Minute, nil)
			if err != nil {
				t.Fatalf("Acquire on an old table: %v", err)
			}
			if info, err := l.Inspect(ctx, "k"); err != nil || !info.Held || info.Value != "" {
				t.Fatalf("Inspect on an old table: %+v, %v", info, err)
			}
			err = l.Publish(ctx, lease, "v")
			if !errors.Is(err, fence.ErrStoreMissing) || !strings.Contains(err.Error(), "run Create") {
				t.Fatalf("Publish on an old table: %v; want an error that says to run Create, matching ErrStoreMissing", err)
			}
			if _, err := l.d.AcquireAll(ctx, []string{"a", "b"}, []string{"o1", "o2"}, time.Minute); err != nil {
				t.Fatalf("AcquireAll on an old table: %v", err)
			}
			errs := make(chan error, 3)
			for range 3 {
				go func() { errs <- w.locker(t, name, 1).Create(ctx) }()
			}
			for range 3 {
				if err := <-errs; err != nil {
					t.Fatalf("Create of an old table, three at once: %v", err)
				}
			}
			if err := l.Publish(ctx, lease, "v"); err != nil {
				t.Fatalf("Publish after Create: %v", err)
			}
			if info, err := l.Inspect(ctx, "k"); err != nil || info.Value != "v" {
				t.Fatalf("Inspect after Publish: %+v, %v", info, err)
			}
			if err := l.Release(ctx, lease); err != nil {
				t.Fatalf("Release: %v", err)
			}
		})
	}
}

// TestCorruptValue: a value column edited by hand into something Publish
// never writes is reported by Inspect with a *fence.CorruptError.
func TestCorruptValue(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 2, nil)
	l := newTable(t, pool)
	ctx := t.Context()
	for _, bad := range []string{"not base64!", strings.Repeat("QUFB", fence.MaxValueLen/3+1)} {
		lease, err := l.Acquire(ctx, bad, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Publish(ctx, lease, "ok"); err != nil {
			t.Fatal(err)
		}
		mustExec(t, pool, "UPDATE "+l.quotedTable()+" SET value = $2 WHERE key = $1", bad, bad)
		_, err = l.Inspect(ctx, bad)
		if ce, ok := errors.AsType[*fence.CorruptError](err); !ok || ce.Key != bad {
			t.Errorf("Inspect of value %.20q...: %v; want a *fence.CorruptError", bad, err)
		}
	}
}

// TestHungStore: Publish and AcquireAll blocked by a table that another
// transaction holds locked return when their ctx ends.
func TestHungStore(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 2, nil)
	l := newTable(t, pool)
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(t.Context(), "LOCK TABLE "+l.quotedTable()+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := l.Publish(ctx, lease, "v"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Publish on a locked table when ctx ended: %v, want context.DeadlineExceeded", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := l.d.AcquireAll(ctx, []string{"a", "b"}, []string{"o1", "o2"}, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AcquireAll on a locked table when ctx ended: %v, want context.DeadlineExceeded", err)
	}
}

// TestAcquireAllRaces: AcquireAll meets rows that others change while it
// runs: a new key whose row another transaction creates (the insert fails
// and undoes the statement), and a free row another transaction holds
// locked (skipped, not waited for). Either way nothing is taken and the
// driver says it lost a race.
func TestAcquireAllRaces(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 3, nil)
	l := newTable(t, pool)
	ctx := t.Context()
	free, err := l.Acquire(ctx, "free", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, free); err != nil {
		t.Fatal(err)
	}
	t.Run("RowLocked", func(t *testing.T) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(context.Background()) }()
		if _, err := tx.Exec(ctx, "SELECT FROM "+l.quotedTable()+" WHERE key = 'free' FOR UPDATE"); err != nil {
			t.Fatal(err)
		}
		_, err = l.d.AcquireAll(ctx, []string{"free", "new-1"}, []string{"o1", "o2"}, time.Minute)
		if !errors.Is(err, driver.ErrAcquireRaced) {
			t.Fatalf("AcquireAll with a row locked by another transaction: %v; want the driver's lost race", err)
		}
	})
	t.Run("RowCreated", func(t *testing.T) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+l.quotedTable()+" (key, owner, token) VALUES ('new-2', 'other', 5)"); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(100 * time.Millisecond)
			_ = tx.Commit(context.Background())
		}()
		_, err = l.d.AcquireAll(ctx, []string{"free", "new-2"}, []string{"o1", "o2"}, time.Minute)
		if !errors.Is(err, driver.ErrAcquireRaced) {
			t.Fatalf("AcquireAll of a key whose row another transaction created: %v; want the driver's lost race", err)
		}
	})
	for _, k := range []string{"free", "new-1"} {
		info, err := l.Inspect(ctx, k)
		if err != nil || info.Held || (k == "free" && info.Token != free.Token) || (k == "new-1" && info.Token != 0) {
			t.Errorf("after the lost races, %q: %+v, %v; want it untouched", k, info, err)
		}
	}
}
