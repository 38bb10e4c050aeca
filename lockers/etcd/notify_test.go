package etcd

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// wakeBound is how long a test lets a woken waiter take to get its key:
// far more than a watch event needs, far less than the hour it would poll
// after, or the minute until the holder's lease expires.
const wakeBound = 10 * time.Second

// twoLockers returns two Lockers under one prefix through two clients of
// the shared server: the views of two processes.
func twoLockers(t testing.TB) (a, b *Locker) {
	t.Helper()
	prefix := uniquePrefix("notify")
	a = newLocker(t, sharedClient(t), &Options{Prefix: prefix})
	b = newLocker(t, sharedClient(t), &Options{Prefix: prefix})
	return a, b
}

// newSession returns a session on l, closed when the test ends.
func newSession(t testing.TB, l fence.Locker, opts *fence.SessionOptions) *fence.Session {
	t.Helper()
	s, err := fence.NewSession(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// lockResult is what a Lock started by startLock returned, and when.
type lockResult struct {
	h   *fence.Handle
	err error
	at  time.Time
}

// startLock runs Lock on key through a session on l with opts (whose
// Observer it sets) on its own goroutine, and returns once an attempt
// found the key busy; busy counts those attempts.
func startLock(t *testing.T, l fence.Locker, key string, opts fence.SessionOptions) (result <-chan lockResult, busy *atomic.Int32) {
	t.Helper()
	busy = new(atomic.Int32)
	first := make(chan struct{}, 1)
	opts.Observer = &fence.Observer{AcquireAttempt: func(e fence.AcquireAttemptEvent) {
		if e.Outcome == fence.Busy {
			busy.Add(1)
			select {
			case first <- struct{}{}:
			default:
			}
		}
	}}
	sess := newSession(t, l, &opts)
	c := make(chan lockResult, 1)
	go func() {
		h, err := sess.Lock(t.Context(), key, nil)
		c <- lockResult{h, err, time.Now()}
	}()
	select {
	case <-first:
	case r := <-c:
		t.Fatalf("Lock returned before waiting: %v", r.err)
	case <-time.After(wakeBound):
		t.Fatal("Lock made no attempt")
	}
	return c, busy
}

// waitLock returns the result of a Lock that should return within bound.
func waitLock(t *testing.T, c <-chan lockResult, bound time.Duration) lockResult {
	t.Helper()
	select {
	case r := <-c:
		if r.err != nil {
			t.Fatalf("Lock: %v", r.err)
		}
		return r
	case <-time.After(bound):
		t.Fatalf("Lock still waiting %v after the key was freed", bound)
		return lockResult{}
	}
}

// waiting is the session of a waiter that only a watch wakes in time: it
// polls once an hour, and the holder's lease lasts a minute.
var waiting = fence.SessionOptions{TTL: time.Minute, PollInterval: time.Hour}

// TestLockWokenByWatch: a Lock waiting through another client gets the
// key soon after the holder releases it, or an operator breaks it,
// without polling: one busy attempt, then the one that wins.
func TestLockWokenByWatch(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"release", "break"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			a, b := twoLockers(t)
			holder, err := newSession(t, a, &fence.SessionOptions{TTL: time.Minute}).TryLock(t.Context(), "k")
			if err != nil {
				t.Fatal(err)
			}
			result, busy := startLock(t, b, "k", waiting)
			freed := time.Now()
			if how == "release" {
				err = holder.Release(t.Context())
			} else {
				err = a.Break(t.Context(), "k")
			}
			if err != nil {
				t.Fatal(err)
			}
			r := waitLock(t, result, wakeBound)
			if r.h.Token() <= holder.Token() {
				t.Errorf("waiter's token %d, want above the holder's %d", r.h.Token(), holder.Token())
			}
			if n := busy.Load(); n != 1 {
				t.Errorf("the waiter found the key busy %d times; want once, before the %s woke it", n, how)
			}
			t.Logf("the waiter got the key %v after the %s", r.at.Sub(freed), how)
			if err := r.h.Release(t.Context()); err != nil {
				t.Fatal(err)
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
	a := newLocker(t, crashing, &Options{Prefix: prefix})
	b := newLocker(t, sharedClient(t), &Options{Prefix: prefix})
	lease, err := a.Acquire(t.Context(), "k", DefaultMinTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	result, _ := startLock(t, b, "k", waiting)
	_ = crashing.Close()
	r := waitLock(t, result, DefaultMinTTL+wakeBound)
	if r.h.Token() <= lease.Token {
		t.Errorf("waiter's token %d, want above the crashed holder's %d", r.h.Token(), lease.Token)
	}
	if err := r.h.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestNotifyReleaseActiveOnReturn: a release that happens right after
// NotifyRelease returned is heard, by a locker on another client.
func TestNotifyReleaseActiveOnReturn(t *testing.T) {
	t.Parallel()
	a, b := twoLockers(t)
	ctx := t.Context()
	for i := range 5 {
		lease, err := a.Acquire(ctx, "k", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, stop, err := b.NotifyRelease(ctx, "k")
		if err != nil {
			t.Fatalf("NotifyRelease: %v", err)
		}
		if err := a.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c:
		case <-time.After(wakeBound):
			t.Fatalf("release %d not notified", i)
		}
		stop()
		stop() // a second stop is harmless
	}
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
	c, stop, err := b.NotifyRelease(ctx, "k")
	if err != nil {
		t.Fatalf("NotifyRelease: %v", err)
	}
	defer stop()
	select {
	case <-c:
	case <-time.After(DefaultMinTTL + wakeBound):
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
	c, stop, err := b.NotifyRelease(ctx, "k")
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
	case <-time.After(wakeBound):
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
	l := newLocker(t, c, &Options{MinTTL: time.Second})
	ctx := t.Context()
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	wake, stop, err := l.NotifyRelease(ctx, "k")
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
	other := newLocker(t, newClient(t, endpointsOf(ms)), &Options{Prefix: l.d.prefix, MinTTL: time.Second})
	if err := other.Break(ctx, "k"); err != nil {
		t.Fatalf("Break after the restart: %v", err)
	}
	select {
	case <-wake:
	case <-time.After(wakeBound):
		t.Fatal("the break after the restart was not notified")
	}
	if _, err := l.Renew(ctx, lease); err == nil {
		t.Fatal("Renew after the break succeeded")
	}
}
