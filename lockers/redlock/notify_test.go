package redlock

import (
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/waittest"
)

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
			waittest.WokenByFree(t, a, b, tt.how)
		})
	}
}

// TestNotifyReleaseActiveOnReturn: a release right after NotifyRelease
// returned is heard.
func TestNotifyReleaseActiveOnReturn(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	_, b := newStoreLocker(t, ms, nil)
	waittest.ActiveOnReturn(t, newLocker(t, ms, nil), b)
}

// TestNotifyAfterMasterRestart: a waiter subscribed before a master was
// killed and restarted is woken when go-redis subscribes again (it may
// have missed a release meanwhile), and hears releases after it.
func TestNotifyAfterMasterRestart(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	a := newLocker(t, ms, nil)
	_, b := newStoreLocker(t, ms, nil)
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
	case <-time.After(waittest.WakeBound):
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
	case <-time.After(waittest.WakeBound):
		t.Fatal("a release after the restart was not notified")
	}
}

// TestNotifyReleaseAfterClose: a closed Locker refuses to wait.
func TestNotifyReleaseAfterClose(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	l, d := newStoreLocker(t, ms, nil)
	if _, stop, err := d.NotifyRelease(t.Context(), "k"); err != nil {
		t.Fatal(err)
	} else {
		stop()
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.NotifyRelease(t.Context(), "k"); err == nil {
		t.Error("NotifyRelease after Close succeeded")
	}
}
