// Package waittest holds what the tests of the lockers that notify
// releases (driver.ReleaseNotifier: PostgreSQL, etcd, Redis, Redlock)
// share: sessions closed with the test, a Lock started in the background
// that has found its key busy, and the cases every such locker passes.
// A waiter uses Waiting, so that only a notification wakes it within
// WakeBound.
package waittest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// WakeBound is how long a test lets a woken waiter take to get its key:
// far more than a notification needs, far less than the hour it would
// poll after, or the minute until the holder's lease expires.
const WakeBound = 10 * time.Second

// Waiting is the session of a waiter that only a notification wakes in
// time: it polls once an hour, and the holder's lease lasts a minute.
var Waiting = fence.SessionOptions{TTL: time.Minute, PollInterval: time.Hour}

// NewSession returns a session on l, closed when the test ends.
func NewSession(t testing.TB, l *fence.Locker, opts *fence.SessionOptions) *fence.Session {
	t.Helper()
	s, err := fence.NewSession(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// Result is what a Lock started by StartLock returned, and when.
type Result struct {
	Handle *fence.Handle
	Err    error
	At     time.Time
}

// StartLock runs Lock on key through a session on l with opts on its own
// goroutine (setting l's Observer), and returns once an attempt
// found the key busy; busy counts those attempts.
func StartLock(t *testing.T, l *fence.Locker, key string, opts fence.SessionOptions) (result <-chan Result, busy *atomic.Int32) {
	t.Helper()
	busy = new(atomic.Int32)
	first := make(chan struct{}, 1)
	l.SetObserver(&fence.Observer{AcquireAttempt: func(e fence.AcquireAttemptEvent) {
		if e.Outcome == fence.Busy {
			busy.Add(1)
			select {
			case first <- struct{}{}:
			default:
			}
		}
	}})
	sess := NewSession(t, l, &opts)
	c := make(chan Result, 1)
	go func() {
		h, err := sess.Lock(t.Context(), key, &fence.LockOptions{Wait: fence.WaitForever})
		c <- Result{Handle: h, Err: err, At: time.Now()}
	}()
	select {
	case <-first:
	case r := <-c:
		t.Fatalf("Lock returned before waiting: %v", r.Err)
	case <-time.After(WakeBound):
		t.Fatal("Lock made no attempt")
	}
	return c, busy
}

// Wait returns the result of a Lock that should return within bound of
// now, failing the test if it errs or does not return.
func Wait(t *testing.T, c <-chan Result, bound time.Duration) Result {
	t.Helper()
	select {
	case r := <-c:
		if r.Err != nil {
			t.Fatalf("Lock: %v", r.Err)
		}
		return r
	case <-time.After(bound):
		t.Fatalf("Lock still waiting %v after the key was freed", bound)
		return Result{}
	}
}

// WokenByFree is the case of a Lock waiting through b (another client, as
// in another process) on key "k", which a holder on a frees: by releasing
// it (how "release") or by an operator's Break through a (how "break").
// The waiter, polling once an hour, must get the key within WakeBound,
// with a higher token than the holder's. It returns how many attempts
// found the key busy, for lockers that can say how many there must be.
func WokenByFree(t *testing.T, a, b *fence.Locker, how string) (busy int32) {
	t.Helper()
	holder, err := NewSession(t, a, &fence.SessionOptions{TTL: time.Minute}).Lock(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	result, attempts := StartLock(t, b, "k", Waiting)
	freed := time.Now()
	switch how {
	case "release":
		err = holder.Release(t.Context())
	case "break":
		err = a.Break(t.Context(), "k")
	default:
		t.Fatalf("waittest: free the key how? %q", how)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := Wait(t, result, WakeBound)
	if r.Handle.Token() <= holder.Token() {
		t.Errorf("waiter's token %d, want above the holder's %d", r.Handle.Token(), holder.Token())
	}
	t.Logf("the waiter got the key %v after the %s", r.At.Sub(freed), how)
	if err := r.Handle.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	return attempts.Load()
}

// ActiveOnReturn is the case of a release, through a, right after
// NotifyRelease of b returned: it must be heard, five times over, each
// time with a new subscription; stopping one twice is harmless.
func ActiveOnReturn(t *testing.T, a *fence.Locker, b driver.ReleaseNotifier) {
	t.Helper()
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
		case <-time.After(WakeBound):
			t.Fatalf("release %d not notified", i)
		}
		stop()
		stop()
	}
}
