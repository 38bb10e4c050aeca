package fence_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/lockers/memory"
)

// counting counts the renewal rounds of a session's keepalive: it is a
// driver that renews in batches over one that does not, so that each
// round is one RenewBatch call.
type counting struct {
	driver.Locker
	rounds, leases atomic.Int64
}

// newCounting returns a Locker over l's driver that counts its rounds.
func newCounting(t *testing.T, l *fence.Locker) (*fence.Locker, *counting) {
	t.Helper()
	var c *counting
	out, err := driver.Wrap(l, func(d driver.Locker) driver.Locker {
		c = &counting{Locker: d}
		return c
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, c
}

func (c *counting) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	c.rounds.Add(1)
	c.leases.Add(int64(len(leases)))
	errs := make([]error, len(leases))
	for i, lease := range leases {
		errs[i] = c.Locker.Renew(ctx, lease)
	}
	return errs
}

func (c *counting) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return c.Locker.(driver.ReleaseNotifier).NotifyRelease(ctx, key)
}

// otherProcess returns a Locker on the same store as l, as another
// process would have: sessions over it do not share l's waiting lines.
func otherProcess(t *testing.T, l *fence.Locker) *fence.Locker {
	t.Helper()
	out, err := driver.Wrap(l, func(d driver.Locker) driver.Locker { return d })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newSession(t *testing.T, l *fence.Locker, opts *fence.SessionOptions) *fence.Session {
	t.Helper()
	s, err := fence.NewSession(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// waitRounds advances clock by step until the keepalive has run n rounds.
func waitRounds(t *testing.T, clock *clocktest.Fake, c *counting, n int64, step time.Duration) {
	t.Helper()
	for c.rounds.Load() < n {
		// Both timers armed (the next renewal and the earliest deadline):
		// the keepalive is idle, any round it started has settled.
		if err := clock.WaitTimers(t.Context(), 2); err != nil {
			t.Fatal(err)
		}
		if c.rounds.Load() >= n {
			return
		}
		clock.Advance(step)
	}
	if err := clock.WaitTimers(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
}

// Handles taken at different times fall into step: after the first
// rounds, the keepalive renews all of them in one round per interval.
func TestKeepaliveRenewsHandlesTogether(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Unix(1e9, 0))
	l, c := newCounting(t, memory.New(&memory.Options{Clock: clock}))
	const ttl = 30 * time.Second
	s := newSession(t, l, &fence.SessionOptions{TTL: ttl, Clock: clock})
	var hs []*fence.Handle
	for i := range 10 {
		h, err := s.Lock(t.Context(), string(rune('a'+i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		clock.Advance(time.Second) // taken a second apart
	}
	first := hs[0].Lease().ValidUntil
	waitRounds(t, clock, c, 2, time.Second)
	before := c.rounds.Load()
	leases := c.leases.Load()
	// Three more intervals: three rounds of all ten leases.
	waitRounds(t, clock, c, before+3, time.Second)
	if got := c.leases.Load() - leases; got != 30 {
		t.Errorf("3 rounds renewed %d leases; want all 10 in each", got)
	}
	for _, h := range hs {
		if h.Err() != nil {
			t.Fatalf("%s: %v", h.Key(), h.Err())
		}
	}
	if !hs[0].Lease().ValidUntil.After(first) || !hs[0].Lease().ValidUntil.Equal(hs[0].Lease().ValidUntil) {
		t.Errorf("ValidUntil %v after renewals, %v at acquisition: the handle was not updated in place", hs[0].Lease().ValidUntil, first)
	}
}

// A blocked Lock wakes when a handle of this process releases the key,
// without waiting for a poll: the poll is an hour and the fake clock does
// not move.
func TestLockWakesOnLocalRelease(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Unix(1e9, 0))
	l := memory.New(&memory.Options{Clock: clock})
	s := newSession(t, l, &fence.SessionOptions{TTL: time.Hour, PollInterval: time.Hour, Clock: clock})
	holder, err := s.Lock(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *fence.Handle, 1)
	go func() {
		h, err := s.Lock(t.Context(), "k", &fence.LockOptions{Wait: fence.WaitForever})
		if err != nil {
			t.Error(err)
		}
		got <- h
	}()
	select {
	case h := <-got:
		t.Fatalf("Lock returned %v while the key was held", h)
	case <-time.After(50 * time.Millisecond):
	}
	if err := holder.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	h := <-got
	if h == nil || h.Token() <= holder.Token() {
		t.Fatalf("Lock after release: %v; want a higher token than %d", h, holder.Token())
	}
}

// A blocked Lock on another session (another process's view of the store)
// wakes on Break through the store's notification.
func TestLockWakesOnBreak(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Unix(1e9, 0))
	l := memory.New(&memory.Options{Clock: clock})
	a := newSession(t, l, &fence.SessionOptions{TTL: time.Hour, Clock: clock})
	holder, err := a.Lock(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A wrapper hides the locker's identity from the waiting line, as
	// another process would be: only the notification can wake b.
	b := newSession(t, otherProcess(t, l), &fence.SessionOptions{TTL: time.Hour, PollInterval: time.Hour, Clock: clock})
	got := make(chan error, 1)
	go func() {
		_, err := b.Lock(t.Context(), "k", &fence.LockOptions{Wait: fence.WaitForever})
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := l.Break(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Lock after Break: %v", err)
	}
	_ = holder
}

// Callers of Lock in one process get a contended key in arrival order:
// eight workers cycling on one key share the cycles about equally.
func TestLockIsFair(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	s := newSession(t, l, &fence.SessionOptions{TTL: time.Minute})
	const workers, cycles = 8, 400
	var counts [workers]int
	var total atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for total.Load() < cycles {
				h, err := s.Lock(t.Context(), "hot", &fence.LockOptions{Wait: fence.WaitForever})
				if err != nil {
					t.Error(err)
					return
				}
				counts[w]++
				total.Add(1)
				time.Sleep(100 * time.Microsecond)
				if err := h.Release(t.Context()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var sum, squares float64
	for _, c := range counts {
		sum += float64(c)
		squares += float64(c) * float64(c)
	}
	if jain := sum * sum / (workers * squares); jain < 0.9 {
		t.Errorf("cycles per worker %v: Jain's index %.2f; want at least 0.9", counts, jain)
	}
}

// A handle lost to a Break closes Done, with a *LeaseLostError from Err
// and as the cause of its Context; Release then reports ErrNotHeld.
func TestHandleLost(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Unix(1e9, 0))
	l := memory.New(&memory.Options{Clock: clock})
	s := newSession(t, l, &fence.SessionOptions{TTL: 30 * time.Second, Clock: clock})
	h, err := s.Lock(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := h.Context(t.Context())
	defer cancel()
	if err := l.Break(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	if err := clock.WaitTimers(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Second) // the next renewal finds the lease gone
	<-h.Done()
	var lost *fence.LeaseLostError
	if !errors.As(h.Err(), &lost) || lost.Token != h.Token() || !errors.Is(h.Err(), fence.ErrNotHeld) {
		t.Fatalf("Err %v; want a LeaseLostError wrapping ErrNotHeld", h.Err())
	}
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), fence.ErrLeaseLost) {
		t.Errorf("context cause %v; want ErrLeaseLost", context.Cause(ctx))
	}
	if err := h.Release(t.Context()); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("Release of a lost handle: %v; want ErrNotHeld", err)
	}
	if err := h.Release(t.Context()); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("second Release: %v; want the first one's result", err)
	}
}

// Release frees the key, Err becomes ErrReleased; Close releases what the
// session still holds and refuses new locks.
func TestReleaseAndClose(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	s, err := fence.NewSession(l, &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Lock(t.Context(), "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Lock(t.Context(), "b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock(t.Context(), "a", nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("second Lock of a held key: %v; want ErrHeld (locks are not reentrant)", err)
	}
	if err := a.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(a.Err(), fence.ErrReleased) || s.Len() != 1 {
		t.Fatalf("after Release: Err %v, %d handles; want ErrReleased and 1", a.Err(), s.Len())
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-b.Done()
	if info, err := l.Inspect(t.Context(), "b"); err != nil || info.Held {
		t.Fatalf("after Close: %+v, %v; want b free", info, err)
	}
	if _, err := s.Lock(t.Context(), "c", nil); !errors.Is(err, fence.ErrSessionClosed) {
		t.Fatalf("Lock after Close: %v; want ErrSessionClosed", err)
	}
}

func TestNewSessionRejects(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	for _, o := range []fence.SessionOptions{
		{TTL: -1}, {RenewInterval: 20 * time.Second}, {SafetyMargin: time.Minute},
		{PollInterval: -1}, {BackoffMin: 2 * time.Second, BackoffMax: time.Second}, {CallTimeout: -1},
	} {
		if _, err := fence.NewSession(l, &o); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%+v: %v; want ErrInvalid", o, err)
		}
	}
	if _, err := fence.NewSession(nil, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("nil locker: %v; want ErrInvalid", err)
	}
	s := newSession(t, l, nil)
	if _, err := s.Lock(t.Context(), "k", &fence.LockOptions{Wait: -1}); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("negative Timeout: %v; want ErrInvalid", err)
	}
}

// Lock gives up after its timeout with an error matching ErrHeld.
func TestLockTimeout(t *testing.T) {
	t.Parallel()
	l := memory.New(nil)
	s := newSession(t, l, &fence.SessionOptions{TTL: time.Minute, PollInterval: 10 * time.Millisecond})
	if _, err := s.Lock(t.Context(), "k", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock(t.Context(), "k", &fence.LockOptions{Wait: 50 * time.Millisecond}); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Lock of a held key: %v; want ErrHeld after the timeout", err)
	}
}

// slowWrites is a driver whose store takes one write of a key per
// second, as Cloud Storage does.
type slowWrites struct{ driver.Locker }

func (s slowWrites) Info() driver.Info {
	info := s.Locker.Info()
	info.MinRenewInterval = time.Second
	return info
}

// A Session refuses to renew faster than its Locker's store sustains.
func TestNewSessionRespectsMinRenewInterval(t *testing.T) {
	t.Parallel()
	l, err := driver.NewLocker(slowWrites{driver.LockerOf(memory.New(nil))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := driver.InfoOf(l).MinRenewInterval; got != time.Second {
		t.Fatalf("InfoOf: MinRenewInterval %v; want 1s", got)
	}
	var inv *fence.InvalidError
	_, err = fence.NewSession(l, &fence.SessionOptions{TTL: 3 * time.Second, RenewInterval: 999 * time.Millisecond})
	if !errors.As(err, &inv) || inv.Field != "RenewInterval" {
		t.Fatalf("RenewInterval 999ms: %v; want an InvalidError on RenewInterval", err)
	}
	// TTL/3 by default: 2 s is too short a TTL, 3 s is enough.
	if _, err := fence.NewSession(l, &fence.SessionOptions{TTL: 2 * time.Second}); !errors.As(err, &inv) {
		t.Fatalf("TTL 2s (renewals every 667ms): %v; want an InvalidError", err)
	}
	newSession(t, l, &fence.SessionOptions{TTL: 3 * time.Second})
	if _, err := driver.NewLocker(negativeRenew{driver.LockerOf(memory.New(nil))}, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("negative MinRenewInterval: %v; want ErrInvalid", err)
	}
}

type negativeRenew struct{ driver.Locker }

func (s negativeRenew) Info() driver.Info {
	info := s.Locker.Info()
	info.MinRenewInterval = -1
	return info
}
