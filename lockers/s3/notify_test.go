package s3

import (
	"errors"
	"net/http"
	"sync/atomic"
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
	_, err := New(newClient(t, nil), "locks", &Options{ProbeInterval: time.Millisecond})
	if !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New with ProbeInterval 1ms: %v; want an error matching fence.ErrInvalid", err)
	}
}

// TestProbeIsAConditionalHead: while a key stays held, each probe is one
// HEAD request that MinIO answers 304 Not Modified, and no GET.
func TestProbeIsAConditionalHead(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	holder := newLocker(t, bucket, nil, nil)
	lease := acquire(t, holder, "k", time.Minute)
	c := &counter{next: http.DefaultTransport}
	var notModified atomic.Int64
	waiter := newLocker(t, bucket, roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := c.RoundTrip(req)
		if err == nil && req.Method == http.MethodHead && resp.StatusCode == http.StatusNotModified {
			notModified.Add(1)
		}
		return resp, err
	}), &Options{ProbeInterval: 10 * time.Millisecond})
	ch, stop, err := waiter.d.NotifyRelease(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if g := c.gets.Load(); g != 1 {
		t.Fatalf("NotifyRelease made %d GETs; want 1, its first reading", g)
	}
	for deadline := time.Now().Add(time.Minute); notModified.Load() < 5; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d HEADs answered 304 in a minute of probing every 10ms; want 5", notModified.Load())
		}
	}
	if g, h := c.gets.Load(), c.others.Load(); g != 1 || h < 5 {
		t.Fatalf("while the key stayed held: %d GETs and %d HEADs; want 1 and at least 5", g, h)
	}
	if err := holder.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatal("no notification a minute after the release")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
