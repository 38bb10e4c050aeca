package azblob

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// clients returns two Lockers on one fresh container through two
// clients: the views of two processes.
func clients(t *testing.T, opts *Options) (a, b *testLocker) {
	t.Helper()
	a = newLocker(t, azuritetest.NewContainer(t, nil, true), opts)
	name := a.d.c.URL()
	b = newLocker(t, azuritetest.Client(t, name[strings.LastIndexByte(name, '/')+1:], nil, true), opts)
	return a, b
}

// TestLockWokenByRelease: a Lock waiting through another client, polling
// once an hour, gets the key soon after the holder releases it or an
// operator breaks it: a probe saw the lease end.
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
// whose holder crashed (a lease never renewed nor released) gets it soon
// after the service ends the lease: a probe saw it expired.
func TestLockWokenByExpiry(t *testing.T) {
	t.Parallel()
	a, b := clients(t, nil)
	crashed, err := a.Acquire(t.Context(), "k", MinTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	result, _ := waittest.StartLock(t, b.Locker, "k", waittest.Waiting)
	r := waittest.Wait(t, result, MinTTL+waittest.WakeBound)
	if r.Handle.Token() <= crashed.Token {
		t.Errorf("waiter's token %d, want above the crashed holder's %d", r.Handle.Token(), crashed.Token)
	}
	if err := r.Handle.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantNoProbes(t, b.d)
}

// wantNoProbes fails the test if d still probes a key once no Lock waits.
func wantNoProbes(t *testing.T, d *store) {
	t.Helper()
	if n := d.probe.Keys(); n != 0 {
		t.Errorf("%d keys still probed after the waits ended", n)
	}
}

// TestProbeIntervalTooShort: a probe interval under probe.MinInterval is
// refused before anything is sent.
func TestProbeIntervalTooShort(t *testing.T) {
	t.Parallel()
	_, err := New(azuritetest.Client(t, "locks", nil, false), &Options{ProbeInterval: time.Millisecond})
	if !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New with ProbeInterval 1ms: %v; want an error matching fence.ErrInvalid", err)
	}
}

// TestProbeSeesEachStepOfBreak: Break goes through three lease states
// (broken, leased under a fresh id, available). A probe that read the
// broken state and then the available one must see a change there, with
// no holder: a waiter it woke at the broken state may have found the
// fresh id's lease, and only that change wakes it again. The same holds
// for a lease acquired by a new holder between two reads and released.
func TestProbeSeesEachStepOfBreak(t *testing.T) {
	t.Parallel()
	l := newLocker(t, azuritetest.NewContainer(t, nil, true), nil)
	ctx := t.Context()
	mustAcquire(t, l, "k", time.Minute, nil)
	if err := l.d.breakLease(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	broken, err := l.d.probeRead(ctx, "k", probe.Reading{})
	if err != nil {
		t.Fatal(err)
	}
	id := fence.NewOwnerID()
	if _, err := l.d.acquireLease(ctx, "k", id, MinTTL, ""); err != nil {
		t.Fatal(err)
	}
	retiring, err := l.d.probeRead(ctx, "k", broken)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.d.releaseLease(ctx, "k", id); err != nil {
		t.Fatal(err)
	}
	free, err := l.d.probeRead(ctx, "k", retiring)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case broken.Holder != "" || free.Holder != "":
		t.Errorf("holders %q when broken, %q when released; want none", broken.Holder, free.Holder)
	case free.Version == broken.Version:
		t.Errorf("the probe reads %q both when broken and after the fresh lease's release: a waiter that found the fresh lease is never woken", free.Version)
	case retiring.Version == broken.Version || retiring.Version == free.Version:
		t.Errorf("versions %q broken, %q leased, %q released; want three", broken.Version, retiring.Version, free.Version)
	}
}
