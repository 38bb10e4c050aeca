package mysql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// TestOldTable: a lease table made without the value columns (by an
// earlier version) keeps working for every call but Publish, whose error
// says to run Create and matches ErrStoreMissing; Create, run by three
// replicas at once, adds the columns, and Publish works.
func TestOldTable(t *testing.T) {
	t.Parallel()
	db := newDB(t, 0)
	name := uniqueName("fence_test_")
	quoted := "`" + name + "`"
	mustExec(t, db, "CREATE TABLE "+quoted+" (`key` VARBINARY(1024) NOT NULL, owner VARBINARY(1024) NOT NULL, token BIGINT NOT NULL, expires_at DATETIME(6) NULL, PRIMARY KEY (`key`)) ENGINE=InnoDB")
	t.Cleanup(func() { dropTable(t, db, quoted) })
	l := newTestLocker(t, db, &Options{Table: name})
	t.Cleanup(func() { _ = l.Close() })
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
		go func() {
			r := newTestLocker(t, newDB(t, 1), &Options{Table: name})
			defer r.Close()
			errs <- r.Create(ctx)
		}()
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
}

// TestCorruptValue: a value longer than fence.MaxValueLen, possible only
// in a table altered by hand, is reported by Inspect with a
// *fence.CorruptError.
func TestCorruptValue(t *testing.T) {
	t.Parallel()
	db := newDB(t, 0)
	l := newTable(t, db)
	t.Cleanup(func() { _ = l.Close() })
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Publish(t.Context(), lease, "ok"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "ALTER TABLE "+l.quotedTable()+" MODIFY value VARBINARY(1024) NULL")
	mustExec(t, db, "UPDATE "+l.quotedTable()+" SET value = ? WHERE `key` = 'k'", []byte(strings.Repeat("x", fence.MaxValueLen+1)))
	if _, err := l.Inspect(t.Context(), "k"); !errors.Is(err, fence.ErrCorrupt) {
		t.Errorf("Inspect of a value of MaxValueLen+1 bytes: %v; want fence.ErrCorrupt", err)
	}
}

// TestPublishWakesOtherProcesses: a Publish frees the holder's bell for
// an instant, which wakes a waiter of another Locker (another process)
// on the key, and takes it again.
func TestPublishWakesOtherProcesses(t *testing.T) {
	t.Parallel()
	db := newDB(t, 0)
	table := newTable(t, db)
	holder := process(t, table.quotedTable()[1:len(table.quotedTable())-1], nil)
	watcher := process(t, table.quotedTable()[1:len(table.quotedTable())-1], nil)
	lease, err := holder.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the holder rings its bell", func() bool { return bellHolder(t, db, holder, "k") != 0 })
	c, stop, err := watcher.d.NotifyRelease(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := holder.Publish(t.Context(), lease, "v"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c:
	case <-time.After(wakeDeadline):
		t.Fatal("a Publish did not wake another Locker's waiter")
	}
	eventually(t, "the holder rings its bell again", func() bool { return bellHolder(t, db, holder, "k") != 0 })
}

// TestHungStore: Publish and AcquireAll blocked on rows that another
// transaction holds locked return when their ctx ends, having changed
// nothing.
func TestHungStore(t *testing.T) {
	t.Parallel()
	db := newDB(t, 0)
	l := newTable(t, db)
	t.Cleanup(func() { _ = l.Close() })
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(t.Context(), "SELECT * FROM "+l.quotedTable()+" WHERE `key` = 'k' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := l.Publish(ctx, lease, "v"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Publish on a locked row when ctx ended: %v, want context.DeadlineExceeded", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := l.d.AcquireAll(ctx, []string{"a", "k"}, []string{"o1", "o2"}, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AcquireAll on a locked row when ctx ended: %v, want context.DeadlineExceeded", err)
	}
	_ = tx.Rollback()
	if info, err := l.Inspect(t.Context(), "a"); err != nil || info.Token != 0 {
		t.Errorf("after the cut-off AcquireAll, Inspect(a) = %+v, %v; want never acquired", info, err)
	}
}

// TestAcquireAllCreatesRacing: many Lockers take overlapping sets of new
// keys at once; InnoDB's gap locks make some transactions deadlock, which
// are sent again; every set is taken exactly once per round, and every
// key's tokens are 1, 2, 3... in the order the sets were taken.
func TestAcquireAllCreatesRacing(t *testing.T) {
	t.Parallel()
	db := newDB(t, 0)
	l := newTable(t, db)
	t.Cleanup(func() { _ = l.Close() })
	name := l.quotedTable()[1 : len(l.quotedTable())-1]
	const workers = 4
	keys := []string{"n-a", "n-b", "n-c"}
	type got struct {
		leases []fence.Lease
		err    error
	}
	out := make(chan got, workers)
	for i := range workers {
		w := newTestLocker(t, newDB(t, 1), &Options{Table: name, WakeConns: -1})
		t.Cleanup(func() { _ = w.Close() })
		set := []string{keys[i%3], keys[(i+1)%3]}
		if set[0] > set[1] {
			set[0], set[1] = set[1], set[0]
		}
		go func() {
			leases, err := w.d.AcquireAll(t.Context(), set, []string{fence.NewOwnerID(), fence.NewOwnerID()}, time.Minute)
			out <- got{leases, err}
		}()
	}
	taken := map[string][]fence.Token{}
	for range workers {
		g := <-out
		if g.err != nil {
			var he *fence.HeldError
			if !errors.As(g.err, &he) && !errors.Is(g.err, driver.ErrAcquireRaced) {
				var ce *ContentionError
				if !errors.As(g.err, &ce) {
					t.Errorf("AcquireAll: %v; want a lease set, a HeldError, a lost race or a ContentionError", g.err)
				}
			}
			continue
		}
		for _, lease := range g.leases {
			taken[lease.Key] = append(taken[lease.Key], lease.Token)
		}
	}
	for k, ts := range taken {
		if len(ts) != 1 || ts[0] != 1 {
			t.Errorf("%q was taken with tokens %v; want once, with token 1 (the keys were new and nobody released)", k, ts)
		}
	}
}

// TestAcquireAllStatements counts AcquireAll's statements once they are
// prepared, whatever the number of keys: START TRANSACTION, the locking
// read, the INSERT of new keys and the UPDATE of the others (each only
// when there are some), COMMIT; START TRANSACTION, the read and ROLLBACK
// when a key is held.
func TestAcquireAllStatements(t *testing.T) {
	t.Parallel()
	var s statements
	db := s.pool(t, 1)
	l := newTable(t, db)
	t.Cleanup(func() { _ = l.Close() })
	ctx := t.Context()
	set := func(prefix string, n int) []string {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("%s-%02d", prefix, i)
		}
		return keys
	}
	owners := func(n int) []string {
		o := make([]string, n)
		for i := range o {
			o[i] = fence.NewOwnerID()
		}
		return o
	}
	for _, n := range []int{2, 8} {
		// A first round prepares the statements for sets of n.
		warm := set(fmt.Sprintf("warm%d", n), n)
		if _, err := l.d.AcquireAll(ctx, warm, owners(n), time.Minute); err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, "UPDATE "+l.quotedTable()+" SET expires_at = NULL")
		if _, err := l.d.AcquireAll(ctx, warm, owners(n), time.Minute); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the background prepares end
		keys := set(fmt.Sprintf("k%d", n), n)
		for _, c := range []struct {
			name string
			want int64
			err  error
		}{
			{"new keys", 4, nil},
			{"held keys", 3, fence.ErrHeld},
		} {
			before := s.count()
			_, err := l.d.AcquireAll(ctx, keys, owners(n), time.Minute)
			if !errors.Is(err, c.err) {
				t.Fatalf("AcquireAll of %d %s: %v", n, c.name, err)
			}
			if got := s.count() - before; got != c.want {
				t.Errorf("AcquireAll of %d %s sent %d statements; want %d", n, c.name, got, c.want)
			}
		}
		mustExec(t, db, "UPDATE "+l.quotedTable()+" SET expires_at = NULL")
		before := s.count()
		if _, err := l.d.AcquireAll(ctx, keys, owners(n), time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := s.count() - before; got != 4 {
			t.Errorf("AcquireAll of %d free keys sent %d statements; want 4", n, got)
		}
	}
}
