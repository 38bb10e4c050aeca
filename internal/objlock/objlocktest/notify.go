package objlocktest

import (
	"testing"
	"time"

	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// RunNotify checks the probes that wake a waiting Session.Lock, on the
// real clock, with two Lockers on one fresh bucket through two clients,
// each with what it saw of its own: the views of two processes.
func RunNotify(t *testing.T, h Harness) {
	clients := func(t *testing.T, o Options) (a, b *Locker) {
		t.Helper()
		bucket := h.NewBucket(t)
		return h.NewLocker(t, bucket, nil, o), h.NewLocker(t, bucket, nil, o)
	}

	// A Lock waiting through another client, polling once an hour, gets
	// the key soon after the holder releases it or an operator breaks it:
	// a probe saw the object change.
	for _, how := range []string{"release", "break"} {
		t.Run("WokenBy/"+how, func(t *testing.T) {
			t.Parallel()
			a, b := clients(t, Options{})
			waittest.WokenByFree(t, a.Locker, b.Locker, how)
			wantNoProbes(t, b)
		})
	}

	// A release right after NotifyRelease returned is heard, each time.
	t.Run("ActiveOnReturn", func(t *testing.T) {
		t.Parallel()
		a, b := clients(t, Options{})
		waittest.ActiveOnReturn(t, a.Locker, b.Store)
		wantNoProbes(t, b)
	})

	// A Lock waiting, polling once an hour, for a key whose holder
	// crashed (a lease never renewed nor released) gets it once the lease
	// has run out for its Locker: in clock-free mode a full lease after it
	// first saw the record (with or without probes: the waiter's attempt
	// is timed for then), in trusted-clock mode at the stored expiry plus
	// MaxClockSkew (which only a probe times).
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"clock-free", Options{}},
		{"clock-free/no-probes", Options{ProbeInterval: probe.Off}},
		{"trusted-clock", Options{TrustedClock: true, MaxClockSkew: time.Second}},
	} {
		t.Run("WokenByExpiry/"+c.name, func(t *testing.T) {
			t.Parallel()
			a, b := clients(t, c.opts)
			crashed, err := a.Acquire(t.Context(), "k", h.MinTTL, nil)
			if err != nil {
				t.Fatal(err)
			}
			result, _ := waittest.StartLock(t, b.Locker, "k", waittest.Waiting)
			r := waittest.Wait(t, result, h.MinTTL+c.opts.MaxClockSkew+waittest.WakeBound)
			if r.Handle.Token() <= crashed.Token {
				t.Errorf("waiter's token %d, want above the crashed holder's %d", r.Handle.Token(), crashed.Token)
			}
			if err := r.Handle.Release(t.Context()); err != nil {
				t.Fatal(err)
			}
			wantNoProbes(t, b)
		})
	}
}

// wantNoProbes fails the test if l still probes a key once no Lock waits.
func wantNoProbes(t *testing.T, l *Locker) {
	t.Helper()
	if p := l.Store.Prober(); p != nil {
		if n := p.Keys(); n != 0 {
			t.Errorf("%d keys still probed after the waits ended", n)
		}
	}
}
