package zookeeper

import (
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// waitTTL is the TTL of the sessions of the wake-on-release tests: as
// long as the tests' session timeout allows.
const waitTTL = testSessionTimeout * 2 / 3

// waiting is the session of a waiter that only a notification wakes in
// time: it polls once an hour.
var waiting = fence.SessionOptions{TTL: waitTTL, PollInterval: time.Hour}

// twoLockers returns two Lockers under one root, each with a session of
// its own: the views of two processes.
func twoLockers(t testing.TB) (a, b testLocker) {
	t.Helper()
	root := uniqueRoot("notify")
	a = newTestLocker(t, connect(t, sharedServers(t), testSessionTimeout), &Options{Root: root})
	b = newTestLocker(t, connect(t, sharedServers(t), testSessionTimeout), &Options{Root: root})
	return a, b
}

// TestLockWokenByWatch: a Lock waiting through another session gets the
// key soon after the holder releases it, or an operator breaks it,
// without polling: one busy attempt, then the one that wins. The holder
// keeps the key for several TTLs first.
func TestLockWokenByWatch(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"release", "break"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			a, b := twoLockers(t)
			holder, err := waittest.NewSession(t, a.Locker, &fence.SessionOptions{TTL: 2 * time.Second}).Lock(t.Context(), "k", nil)
			if err != nil {
				t.Fatal(err)
			}
			result, busy := waittest.StartLock(t, b.Locker, "k", waiting)
			time.Sleep(3 * 2 * time.Second)
			select {
			case r := <-result:
				t.Fatalf("the waiter got the key while it was held: %v", r.Err)
			default:
			}
			freed := time.Now()
			if how == "release" {
				err = holder.Release(t.Context())
			} else {
				err = a.Break(t.Context(), "k")
			}
			if err != nil {
				t.Fatal(err)
			}
			r := waittest.Wait(t, result, waittest.WakeBound)
			t.Logf("the waiter got the key %v after the %s", r.At.Sub(freed), how)
			if r.Handle.Token() <= holder.Token() {
				t.Errorf("waiter's token %d, want above the holder's %d", r.Handle.Token(), holder.Token())
			}
			if n := busy.Load(); n != 1 {
				t.Errorf("the waiter found the key busy %d times; want once, before the %s woke it", n, how)
			}
			if err := r.Handle.Release(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLockAfterCrashedHolder: a holder whose session ends (its process
// died; here its connection closes) loses the key at once, since the
// server deletes the session's ephemeral nodes, and the deletion wakes
// the waiter.
func TestLockAfterCrashedHolder(t *testing.T) {
	t.Parallel()
	root := uniqueRoot("crash")
	crashing := connect(t, sharedServers(t), testSessionTimeout)
	a := newTestLocker(t, crashing, &Options{Root: root})
	b := newTestLocker(t, connect(t, sharedServers(t), testSessionTimeout), &Options{Root: root})
	lease, err := a.Acquire(t.Context(), "k", waitTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	result, _ := waittest.StartLock(t, b.Locker, "k", waiting)
	crashing.Close()
	r := waittest.Wait(t, result, waittest.WakeBound)
	if r.Handle.Token() <= lease.Token {
		t.Errorf("waiter's token %d, want above the crashed holder's %d", r.Handle.Token(), lease.Token)
	}
	if err := r.Handle.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestNotifyReleaseActiveOnReturn: a release right after NotifyRelease
// returned is heard, five times over, each time with a new subscription;
// stopping one twice is harmless.
func TestNotifyReleaseActiveOnReturn(t *testing.T) {
	t.Parallel()
	a, b := twoLockers(t)
	ctx := t.Context()
	for i := range 5 {
		lease, err := a.Acquire(ctx, "k", waitTTL, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, stop, err := b.d.NotifyRelease(ctx, "k")
		if err != nil {
			t.Fatalf("NotifyRelease: %v", err)
		}
		if err := a.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c:
		case <-time.After(waittest.WakeBound):
			t.Fatalf("release %d not notified", i)
		}
		stop()
		stop()
	}
}

// TestNotifyFreeKey: NotifyRelease of a key never taken (its lock path
// missing) signals at once, and again when a holder that came since
// releases it: the watch follows the key from no lock path to a holder.
func TestNotifyFreeKey(t *testing.T) {
	t.Parallel()
	a, b := twoLockers(t)
	ctx := t.Context()
	c, stop, err := b.d.NotifyRelease(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	select {
	case <-c:
	case <-time.After(waittest.WakeBound):
		t.Fatal("no signal for a free key")
	}
	lease, err := a.Acquire(ctx, "k", waitTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The watcher moves to the holder's node; it may signal on its way
	// (the lock path was created before the holder's node, and a
	// signal may be spurious): drop that.
	time.Sleep(200 * time.Millisecond)
	select {
	case <-c:
	default:
	}
	if err := a.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c:
	case <-time.After(waittest.WakeBound):
		t.Fatal("the release of the holder that came since was not notified")
	}
}
