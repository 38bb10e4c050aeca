package gcs

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// clients returns two Lockers on one fresh bucket through two clients,
// on the real clock, each with what it saw of its own: the views of two
// processes.
func clients(t *testing.T, opts *Options) (a, b *testLocker) {
	t.Helper()
	bucket := newBucket(t)
	return newLocker(t, bucket, nil, opts), newLocker(t, bucket, nil, opts)
}

// TestLockWokenByRelease: a Lock waiting through another client, polling
// once an hour, gets the key soon after the holder releases it or an
// operator breaks it: a probe saw the object change.
func TestLockWokenByRelease(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"release", "break"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			a, b := clients(t, nil)
			waittest.WokenByFree(t, a.Locker, b.Locker, how)
			wantNoProbes(t, b.d)
		})
	}
}

// TestNotifyReleaseActiveOnReturn: a release right after NotifyRelease
// returned is heard, each time.
func TestNotifyReleaseActiveOnReturn(t *testing.T) {
	t.Parallel()
	a, b := clients(t, nil)
	waittest.ActiveOnReturn(t, a.Locker, b.d)
	wantNoProbes(t, b.d)
}

// TestLockWokenByExpiry: a Lock waiting, polling once an hour, for a key
// whose holder crashed (a lease never renewed nor released) gets it once
// the lease has run out for its Locker: in clock-free mode a full lease
// after it first saw the record (with or without probes: the waiter's
// attempt is timed for then), in trusted-clock mode at the stored expiry
// plus MaxClockSkew (which only a probe times).
func TestLockWokenByExpiry(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"clock-free", Options{}},
		{"clock-free/no-probes", Options{ProbeInterval: probe.Off}},
		{"trusted-clock", Options{TrustedClock: true, MaxClockSkew: time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, b := clients(t, &c.opts)
			crashed, err := a.Acquire(t.Context(), "k", MinTTL, nil)
			if err != nil {
				t.Fatal(err)
			}
			result, _ := waittest.StartLock(t, b.Locker, "k", waittest.Waiting)
			r := waittest.Wait(t, result, MinTTL+c.opts.MaxClockSkew+waittest.WakeBound)
			if r.Handle.Token() <= crashed.Token {
				t.Errorf("waiter's token %d, want above the crashed holder's %d", r.Handle.Token(), crashed.Token)
			}
			if err := r.Handle.Release(t.Context()); err != nil {
				t.Fatal(err)
			}
			wantNoProbes(t, b.d)
		})
	}
}

// wantNoProbes fails the test if d still probes a key once no Lock waits.
func wantNoProbes(t *testing.T, d *store) {
	t.Helper()
	if d.Prober() == nil {
		return
	}
	if n := d.Prober().Keys(); n != 0 {
		t.Errorf("%d keys still probed after the waits ended", n)
	}
}

// TestProbeIntervalTooShort: a probe interval under probe.MinInterval is
// refused before anything is sent.
func TestProbeIntervalTooShort(t *testing.T) {
	t.Parallel()
	_, err := New(newClient(t, nil).Bucket("locks"), &Options{ProbeInterval: time.Millisecond})
	if !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New with ProbeInterval 1ms: %v; want an error matching fence.ErrInvalid", err)
	}
}
