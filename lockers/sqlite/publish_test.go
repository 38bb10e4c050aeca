package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// TestOldTable: a lease table made by an earlier version (no value
// columns) keeps its rows and tokens, gets the columns on the Locker's
// first call (several processes at once), and then takes values.
func TestOldTable(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	first := open(t, url, nil)
	var db *sql.DB
	first.As(&db)
	if _, err := db.Exec(`DROP TABLE fence_locks`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE fence_locks (key TEXT NOT NULL PRIMARY KEY, owner TEXT NOT NULL,
		token INTEGER NOT NULL, expires INTEGER) STRICT, WITHOUT ROWID`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO fence_locks VALUES ('k', 'old', 7, NULL)`); err != nil {
		t.Fatal(err)
	}
	lockers := make([]*fence.Locker, 4)
	var wg sync.WaitGroup
	errs := make([]error, len(lockers))
	for i := range lockers {
		lockers[i] = open(t, url, nil)
		wg.Go(func() { _, errs[i] = lockers[i].Inspect(t.Context(), "k") })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("Inspect on an old table, four processes at once: %v", err)
	}
	l := lockers[0]
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil || lease.Token != 8 {
		t.Fatalf("Acquire on an old table's row of token 7: %+v, %v; want token 8", lease, err)
	}
	if err := l.Publish(t.Context(), lease, "v"); err != nil {
		t.Fatalf("Publish after the first call added the columns: %v", err)
	}
	if info, err := lockers[1].Inspect(t.Context(), "k"); err != nil || info.Value != "v" {
		t.Fatalf("Inspect: %+v, %v; want value v", info, err)
	}
}

// TestCorruptValue: a value longer than fence.MaxValueLen, written by
// hand, is reported by Inspect with a *fence.CorruptError.
func TestCorruptValue(t *testing.T) {
	t.Parallel()
	l := open(t, fileURL(t), nil)
	var db *sql.DB
	l.As(&db)
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Publish(t.Context(), lease, "ok"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE fence_locks SET value = ? WHERE key = 'k'`, []byte(strings.Repeat("x", fence.MaxValueLen+1))); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Inspect(t.Context(), "k"); !errors.Is(err, fence.ErrCorrupt) {
		t.Errorf("Inspect of a value of MaxValueLen+1 bytes: %v; want fence.ErrCorrupt", err)
	}
}

// TestPublishWakesOtherProcesses: a Publish by one Locker (another
// process) wakes the waiters of another Locker on the file, through its
// poller.
func TestPublishWakesOtherProcesses(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	holder, watcher := open(t, url, nil), open(t, url, nil)
	lease, err := holder.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := driver.LockerOf(watcher).(driver.ReleaseNotifier)
	c, stop, err := n.NotifyRelease(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	time.Sleep(3 * time.Duration(50) * time.Millisecond) // the poller has read the row
	for len(c) > 0 {
		<-c
	}
	if err := holder.Publish(t.Context(), lease, "v"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatal("the other Locker's waiter was not woken by a Publish")
	}
}

// TestContextEndsABusyPublish: Publish and AcquireAll waiting for another
// connection's write lock return once their context ends, and write
// nothing.
func TestContextEndsABusyPublish(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	l := open(t, url, nil)
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := open(t, url, nil)
	var odb *sql.DB
	other.As(&odb)
	conn, err := odb.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := l.Publish(ctx, lease, "v"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Publish while another writer holds the lock = %v; want context.DeadlineExceeded", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	m := driver.LockerOf(l).(driver.MultiAcquirer)
	if _, err := m.AcquireAll(ctx, []string{"a", "b"}, []string{"o1", "o2"}, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AcquireAll while another writer holds the lock = %v; want context.DeadlineExceeded", err)
	}
	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if info, err := l.Inspect(t.Context(), k); err != nil || info.Token != 0 {
			t.Errorf("after the cut-off AcquireAll, Inspect(%q) = %+v, %v; want never acquired", k, info, err)
		}
	}
	if info, err := l.Inspect(t.Context(), "k"); err != nil || info.Value != "" {
		t.Errorf("after the cut-off Publish, Inspect = %+v, %v; want no value", info, err)
	}
	// The connections are usable again: no transaction was left open.
	if _, err := m.AcquireAll(t.Context(), []string{"a", "b"}, []string{"o1", "o2"}, time.Minute); err != nil {
		t.Errorf("AcquireAll after the cut-off ones: %v", err)
	}
}
