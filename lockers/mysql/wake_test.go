package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// wakeDeadline bounds the waits of the wake-up tests for an event that
// must come: far beyond any hand-off, far below the hour they would poll.
const wakeDeadline = 60 * time.Second

// neverPoll is a PollInterval that no test waits out: a waiter that gets
// the key within wakeDeadline was woken.
const neverPoll = time.Hour

// process is a Locker on a pool of its own (no limit, so the wake-ups
// are on), as another process would have.
func process(t *testing.T, table string, opts *Options) testLocker {
	t.Helper()
	o := Options{Table: table}
	if opts != nil {
		o = *opts
		o.Table = table
	}
	l := newTestLocker(t, newDB(t, 0), &o)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// bellHolder returns the connection id holding key's bell, 0 for none.
func bellHolder(t *testing.T, db *sql.DB, l testLocker, key string) int64 {
	t.Helper()
	var id sql.NullInt64
	if err := db.QueryRowContext(t.Context(), "SELECT IS_USED_LOCK(?)", bellName(l.d.table, key)).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id.Int64
}

// eventually calls cond until it is true, failing the test after
// wakeDeadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wakeDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", wakeDeadline, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lockAsync runs Session.Lock waiting for ever (under wakeDeadline) on a
// session that polls only every neverPoll, and sends its outcome.
func lockAsync(t *testing.T, l testLocker, key string) <-chan error {
	t.Helper()
	s, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: time.Minute, PollInterval: neverPoll})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wakeDeadline)
		defer cancel()
		h, err := s.Lock(ctx, key, &fence.LockOptions{Wait: fence.WaitForever})
		if err == nil {
			err = h.Release(ctx)
		}
		_ = s.Close(ctx)
		out <- err
	}()
	return out
}

// TestWakeOnRelease: a Session waiting on a key that a Locker of another
// process holds gets it once that Locker releases it, though it polls
// only every hour: the release woke it. The same after a Break by the
// holder's Locker.
func TestWakeOnRelease(t *testing.T) {
	t.Parallel()
	table := newTable(t, newDB(t, 2)).d.table
	table = table[1 : len(table)-1] // unquoted
	holder := process(t, table, nil)
	waiter := process(t, table, nil)
	ctx := t.Context()
	for _, how := range []string{"release", "break"} {
		key := "wake-" + how
		lease, err := holder.Acquire(ctx, key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the holder's bell is not held", func() bool { return bellHolder(t, holder.d.db, holder, key) != 0 })
		got := lockAsync(t, waiter, key)
		// Give the waiter time to be blocked on the bell; if it is not
		// yet, the release finds it looking and it is woken all the same.
		time.Sleep(100 * time.Millisecond)
		select {
		case err := <-got:
			t.Fatalf("%s: Lock returned while the key was held: %v", how, err)
		default:
		}
		if how == "release" {
			err = holder.Release(ctx, lease)
		} else {
			err = holder.Break(ctx, key)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("%s: the waiter was not woken: %v", how, err)
		}
	}
}

// TestWakeNoLostWakeup: a release that comes right after NotifyRelease
// returned, before the waiter's GET_LOCK reaches the server, still wakes
// it, every time.
func TestWakeNoLostWakeup(t *testing.T) {
	t.Parallel()
	table := newTable(t, newDB(t, 2)).d.table
	table = table[1 : len(table)-1]
	holder := process(t, table, nil)
	waiter := process(t, table, nil)
	ctx := t.Context()
	for i := range 30 {
		lease, err := holder.Acquire(ctx, "race", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the holder's bell is not held", func() bool { return bellHolder(t, holder.d.db, holder, "race") != 0 })
		c, stop, err := waiter.d.NotifyRelease(ctx, "race")
		if err != nil {
			t.Fatal(err)
		}
		if err := holder.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c:
		case <-time.After(wakeDeadline):
			t.Fatalf("round %d: no wake-up after the release", i)
		}
		stop()
	}
}

// TestWakeFallsBackToPolling: a holder that rings no bell (its wake-ups
// are off) wakes nobody, and the waiter gets the key by polling; the
// waiter's NotifyRelease sends nothing while the key stays held.
func TestWakeFallsBackToPolling(t *testing.T) {
	t.Parallel()
	table := newTable(t, newDB(t, 2)).d.table
	table = table[1 : len(table)-1]
	silent := process(t, table, &Options{WakeConns: -1})
	waiter := process(t, table, nil)
	ctx := t.Context()
	lease, err := silent.Acquire(ctx, "quiet", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, stop, err := waiter.d.NotifyRelease(ctx, "quiet")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	time.Sleep(300 * time.Millisecond) // several looks at the silent bell
	select {
	case <-c:
		t.Fatal("a wake-up while the key is held and nobody rang")
	default:
	}
	if _, _, err := silent.d.NotifyRelease(ctx, "quiet"); !errors.Is(err, errNoWake) {
		t.Fatalf("NotifyRelease with the wake-ups off: %v, want errNoWake", err)
	}

	s, err := fence.NewSession(waiter.Locker, &fence.SessionOptions{TTL: time.Minute, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	got := make(chan error, 1)
	go func() {
		h, err := s.Lock(ctx, "quiet", &fence.LockOptions{Wait: wakeDeadline})
		if err == nil {
			err = h.Release(ctx)
		}
		got <- err
	}()
	if err := silent.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the polling waiter did not get the key: %v", err)
	}
}

// TestWakeBellConnectionLost: when the connection holding a Locker's
// bells dies, the waiters are woken (spuriously: the key is still held)
// and wait again, the Locker takes its bells again on a new connection,
// and the release still wakes them.
func TestWakeBellConnectionLost(t *testing.T) {
	t.Parallel()
	admin := newDB(t, 2)
	table := newTable(t, admin).d.table
	table = table[1 : len(table)-1]
	holder := process(t, table, nil)
	waiter := process(t, table, nil)
	ctx := t.Context()
	lease, err := holder.Acquire(ctx, "killed", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	var first int64
	eventually(t, "the holder's bell is not held", func() bool { first = bellHolder(t, admin, holder, "killed"); return first != 0 })
	got := lockAsync(t, waiter, "killed")
	time.Sleep(100 * time.Millisecond)
	mustExec(t, admin, fmt.Sprintf("KILL %d", first))
	eventually(t, "the bell was not taken again", func() bool {
		id := bellHolder(t, admin, holder, "killed")
		return id != 0 && id != first
	})
	// The waiter, woken by the loss, looks at the bell again at most
	// waiterLookMax apart: let it see the new one.
	time.Sleep(2 * waiterLookMax)
	select {
	case err := <-got:
		t.Fatalf("Lock returned while the key was held: %v", err)
	default:
	}
	if err := holder.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the waiter was not woken: %v", err)
	}
}

// TestWakeConnections: waiters beyond WakeConns-1 get an error (they
// poll), a stopped waiter gives its connection back, and a Locker that
// holds no lease holds no connection and no bell.
func TestWakeConnections(t *testing.T) {
	t.Parallel()
	table := newTable(t, newDB(t, 2)).d.table
	table = table[1 : len(table)-1]
	holder := process(t, table, nil)
	waiter := process(t, table, &Options{WakeConns: 3})
	ctx := t.Context()
	var leases []fence.Lease
	for _, key := range []string{"a", "b", "c"} {
		lease, err := holder.Acquire(ctx, key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, lease)
	}
	var stops []func()
	for _, key := range []string{"a", "b"} {
		_, stop, err := waiter.d.NotifyRelease(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		stops = append(stops, stop)
	}
	if _, _, err := waiter.d.NotifyRelease(ctx, "c"); err == nil {
		t.Fatal("a third waiter on WakeConns 3 got a connection")
	}
	if n := waiter.d.db.Stats().InUse; n != 2 {
		t.Errorf("%d connections in use by two waiters, want 2", n)
	}
	for _, stop := range stops {
		stop()
	}
	for _, lease := range leases {
		if err := holder.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the waiters kept their connections", func() bool { return waiter.d.db.Stats().InUse == 0 })
	eventually(t, "the holder kept its bell connection", func() bool { return holder.d.db.Stats().InUse == 0 })
	for _, key := range []string{"a", "b", "c"} {
		if id := bellHolder(t, holder.d.db, holder, key); id != 0 {
			t.Errorf("bell of %q still held by connection %d", key, id)
		}
	}
	// A slot is free again.
	_, stop, err := waiter.d.NotifyRelease(ctx, "c")
	if err != nil {
		t.Fatalf("NotifyRelease after the others stopped: %v", err)
	}
	stop()
}

// TestWakeBoundedPool: on a pool with a limit the wake-ups are off
// unless WakeConns says otherwise.
func TestWakeBoundedPool(t *testing.T) {
	t.Parallel()
	db := newDB(t, 4)
	if l := newTestLocker(t, db, nil); l.d.bells != nil || l.d.slots != nil {
		t.Error("wake-ups on over a bounded pool by default")
	}
	if l := newTestLocker(t, db, &Options{WakeConns: 2}); l.d.bells == nil || cap(l.d.slots) != 1 {
		t.Error("WakeConns 2 over a bounded pool: want bells and one waiter")
	}
	if l := newTestLocker(t, newDB(t, 0), nil); l.d.bells == nil || cap(l.d.slots) != DefaultWakeConns-1 {
		t.Error("wake-ups not on by default over a pool without a limit")
	}
}
