package redlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// wakeBound is how long a test lets a woken waiter take to get its key:
// far more than a notification needs, far less than the hour it would
// poll after, or the minute until the holder's lease expires.
const wakeBound = 10 * time.Second

// waiting is the session of a waiter that only a notification wakes in
// time: it polls once an hour, and the holder's lease lasts a minute.
var waiting = fence.SessionOptions{TTL: time.Minute, PollInterval: time.Hour}

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

type lockResult struct {
	h   *fence.Handle
	err error
}

// startLock runs Lock on key through a session on l on its own goroutine,
// and returns once an attempt found the key busy.
func startLock(t *testing.T, l fence.Locker, key string, opts fence.SessionOptions) <-chan lockResult {
	t.Helper()
	var busy atomic.Int32
	first := make(chan struct{}, 1)
	opts.Observer = &fence.Observer{AcquireAttempt: func(e fence.AcquireAttemptEvent) {
		if e.Outcome == fence.Busy && busy.Add(1) == 1 {
			first <- struct{}{}
		}
	}}
	sess := newSession(t, l, &opts)
	c := make(chan lockResult, 1)
	go func() {
		h, err := sess.Lock(t.Context(), key, nil)
		c <- lockResult{h, err}
	}()
	select {
	case <-first:
	case r := <-c:
		t.Fatalf("Lock returned before waiting: %v", r.err)
	case <-time.After(wakeBound):
		t.Fatal("Lock made no attempt")
	}
	return c
}

// TestLockWokenByNotification: a Lock waiting through another Locker
// gets the key soon after the holder releases it or an operator breaks
// it, without polling, also with one of the three masters down.
func TestLockWokenByNotification(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		how  string
		down bool
	}{{"release", false}, {"break", false}, {"release", true}, {"break", true}} {
		name := tt.how
		if tt.down {
			name += "WithAMasterDown"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ms := startMasters(t, 3, volatile)
			if tt.down {
				ms[1].kill()
			}
			a, b := newLocker(t, ms, nil), newLocker(t, ms, nil)
			holder, err := newSession(t, a, &fence.SessionOptions{TTL: time.Minute}).TryLock(t.Context(), "k")
			if err != nil {
				t.Fatal(err)
			}
			result := startLock(t, b, "k", waiting)
			if tt.how == "release" {
				err = holder.Release(t.Context())
			} else {
				err = a.Break(t.Context(), "k")
			}
			if err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-result:
				if r.err != nil {
					t.Fatalf("Lock: %v", r.err)
				}
				if r.h.Token() <= holder.Token() {
					t.Errorf("waiter's token %d, want above the holder's %d", r.h.Token(), holder.Token())
				}
				if err := r.h.Release(t.Context()); err != nil {
					t.Fatal(err)
				}
			case <-time.After(wakeBound):
				t.Fatalf("Lock still waiting %v after the %s", wakeBound, tt.how)
			}
		})
	}
}

// TestNotifyReleaseActiveOnReturn: a release right after NotifyRelease
// returned is heard.
func TestNotifyReleaseActiveOnReturn(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	a, b := newLocker(t, ms, nil), newLocker(t, ms, nil)
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
	}
}

// TestNotifyAfterMasterRestart: a waiter subscribed before a master was
// killed and restarted is woken when go-redis subscribes again (it may
// have missed a release meanwhile), and hears releases after it.
func TestNotifyAfterMasterRestart(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	a, b := newLocker(t, ms, nil), newLocker(t, ms, nil)
	ctx := t.Context()
	c, stop, err := b.NotifyRelease(ctx, "k")
	if err != nil {
		t.Fatalf("NotifyRelease: %v", err)
	}
	defer stop()
	for _, m := range ms {
		m.crash(t)
	}
	select {
	case <-c:
	case <-time.After(wakeBound):
		t.Fatal("no wake-up after the masters came back")
	}
	// Drain wake-ups of the reconnects, then a release must still be heard.
	lease, err := a.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	for len(c) > 0 {
		<-c
	}
	if err := a.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c:
	case <-time.After(wakeBound):
		t.Fatal("a release after the restart was not notified")
	}
}

// TestNotifyReleaseAfterClose: a closed Locker refuses to wait.
func TestNotifyReleaseAfterClose(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	l := newLocker(t, ms, nil)
	if _, stop, err := l.NotifyRelease(t.Context(), "k"); err != nil {
		t.Fatal(err)
	} else {
		stop()
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.NotifyRelease(t.Context(), "k"); err == nil {
		t.Error("NotifyRelease after Close succeeded")
	}
}
