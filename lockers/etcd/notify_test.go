package etcd

import (
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/waittest"
)

// twoLockers returns two Lockers under one prefix through two clients of
// the shared server: the views of two processes.
func twoLockers(t testing.TB) (a, b testLocker) {
	t.Helper()
	prefix := uniquePrefix("notify")
	a = newTestLocker(t, sharedClient(t), &Options{Prefix: prefix})
	b = newTestLocker(t, sharedClient(t), &Options{Prefix: prefix})
	return a, b
}

// TestLockWokenByWatch: a Lock waiting through another client gets the
// key soon after the holder releases it, or an operator breaks it,
// without polling: one busy attempt, then the one that wins.
func TestLockWokenByWatch(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"release", "break"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			a, b := twoLockers(t)
			if n := waittest.WokenByFree(t, a.Locker, b.Locker, how); n != 1 {
				t.Errorf("the waiter found the key busy %d times; want once, before the %s woke it", n, how)
			}
		})
	}
}

// TestLockAfterCrashedHolder: a holder that stops renewing (its process
// died; here its client closes) loses the key when its etcd lease
// expires, and the server's deletion of the record wakes the waiter.
func TestLockAfterCrashedHolder(t *testing.T) {
	t.Parallel()
	prefix := uniquePrefix("crash")
	crashing := sharedClient(t)
	a := newTestLocker(t, crashing, &Options{Prefix: prefix})
	b := newTestLocker(t, sharedClient(t), &Options{Prefix: prefix})
	lease, err := a.Acquire(t.Context(), "k", DefaultMinTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	result, _ := waittest.StartLock(t, b.Locker, "k", waittest.Waiting)
	_ = crashing.Close()
	r := waittest.Wait(t, result, DefaultMinTTL+waittest.WakeBound)
	if r.Handle.Token() <= lease.Token {
		t.Errorf("waiter's token %d, want above the crashed holder's %d", r.Handle.Token(), lease.Token)
	}
	if err := r.Handle.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestNotifyReleaseActiveOnReturn: a release that happens right after
// NotifyRelease returned is heard, by a locker on another client.
func TestNotifyReleaseActiveOnReturn(t *testing.T) {
	t.Parallel()
	a, b := twoLockers(t)
	waittest.ActiveOnReturn(t, a.Locker, b.d)
}

// TestNotifyReleaseOnExpiry: a lease that runs out on the server deletes
// its record, which the watch passes on: expiry wakes waiters.
func TestNotifyReleaseOnExpiry(t *testing.T) {
	t.Parallel()
	a, b := twoLockers(t)
	ctx := t.Context()
	lease, err := a.Acquire(ctx, "k", DefaultMinTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, stop, err := b.d.NotifyRelease(ctx, "k")
	if err != nil {
		t.Fatalf("NotifyRelease: %v", err)
	}
	defer stop()
	select {
	case <-c:
	case <-time.After(DefaultMinTTL + waittest.WakeBound):
		t.Fatal("the expiry was not notified")
	}
	info, err := b.Inspect(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if info.Held || info.Token != lease.Token {
		t.Errorf("Inspect after the notified expiry = %+v; want free, last token %d", info, lease.Token)
	}
}

// TestNotifyReleaseNoEventForAcquireOrRenew: taking and renewing a key
// send nothing; only a deletion does.
func TestNotifyReleaseNoEventForAcquireOrRenew(t *testing.T) {
	t.Parallel()
	a, b := twoLockers(t)
	ctx := t.Context()
	c, stop, err := b.d.NotifyRelease(ctx, "k")
	if err != nil {
		t.Fatalf("NotifyRelease: %v", err)
	}
	defer stop()
	lease, err := a.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Renew(ctx, lease); err != nil {
		t.Fatal(err)
	}
	// A release of another key with the same prefix is not heard either.
	other, err := a.Acquire(ctx, "k2", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c:
	case <-time.After(waittest.WakeBound):
		t.Fatal("the release was not notified")
	}
	select {
	case <-c:
		t.Fatal("a second notification, for one release (the acquire, the renewal or the other key's release was heard)")
	case <-time.After(500 * time.Millisecond):
	}
}

// TestNotifyReleaseSurvivesServerRestart: the watch of a member that is
// killed and restarted goes on (the client resumes it from the last
// revision it saw, so nothing is missed) and hears the release after.
func TestNotifyReleaseSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	ms := startCluster(t, 1)
	c := newClient(t, endpointsOf(ms))
	l := newTestLocker(t, c, &Options{MinTTL: time.Second})
	ctx := t.Context()
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	wake, stop, err := l.d.NotifyRelease(ctx, "k")
	if err != nil {
		t.Fatalf("NotifyRelease: %v", err)
	}
	defer stop()
	ms[0].proc.Kill()
	ms[0].proc.Restart()
	waitWritable(t, endpointsOf(ms))
	select {
	case <-wake: // a spurious signal, if the watch was set up again
	default:
	}
	// A second locker releases, so that the release does not travel on
	// the watching client's own stream only.
	other := newTestLocker(t, newClient(t, endpointsOf(ms)), &Options{Prefix: l.d.prefix, MinTTL: time.Second})
	if err := other.Break(ctx, "k"); err != nil {
		t.Fatalf("Break after the restart: %v", err)
	}
	select {
	case <-wake:
	case <-time.After(waittest.WakeBound):
		t.Fatal("the break after the restart was not notified")
	}
	if _, err := l.Renew(ctx, lease); err == nil {
		t.Fatal("Renew after the break succeeded")
	}
}
