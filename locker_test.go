package fence_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
)

// oneKey is a LockerDriver over one in-memory record that counts the calls
// that reach it, to show what the portable layer decides on its own.
type oneKey struct {
	mu      sync.Mutex
	clock   fence.Clock
	calls   int
	owner   string
	token   fence.Token
	until   time.Time
	acquire func(key, owner string, ttl time.Duration) (fence.Lease, error) // overrides Acquire when set
	renew   error                                                           // returned by Renew when set
}

func (d *oneKey) Info() driver.Info {
	return driver.Info{Name: "onekey", MaxKeyLen: 16, MaxOwnerLen: 40, MinTTL: time.Second, MaxTTL: time.Hour}
}

func (d *oneKey) Acquire(_ context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	if d.acquire != nil {
		return d.acquire(key, owner, ttl)
	}
	now := d.clock.Now()
	if now.Before(d.until) {
		return fence.Lease{}, &fence.HeldError{Owner: d.owner, Token: d.token}
	}
	d.token++
	d.owner, d.until = owner, now.Add(ttl)
	return fence.Lease{Key: key, Owner: owner, Token: d.token}, nil
}

func (d *oneKey) Renew(_ context.Context, l fence.Lease) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	if d.renew != nil {
		return d.renew
	}
	d.until = d.clock.Now().Add(l.TTL)
	return nil
}

func (d *oneKey) Release(context.Context, fence.Lease) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	d.until = time.Time{}
	return nil
}

func (d *oneKey) Break(context.Context, string) error {
	return d.Release(context.Background(), fence.Lease{})
}

func (d *oneKey) Inspect(_ context.Context, key string) (fence.LockInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	return fence.LockInfo{Owner: d.owner, Token: d.token, Held: d.clock.Now().Before(d.until), ValidUntil: d.until}, nil
}

func (d *oneKey) callCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

func newOneKey(t *testing.T) (*fence.Locker, *oneKey, *clocktest.Fake) {
	t.Helper()
	clock := clocktest.New(time.Unix(1_000_000, 0))
	d := &oneKey{clock: clock}
	l, err := driver.NewLocker(d, &driver.LockerOptions{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return l, d, clock
}

func TestBadInputNeverReachesTheDriver(t *testing.T) {
	t.Parallel()
	l, d, _ := newOneKey(t)
	ctx := context.Background()
	good := fence.Lease{Key: "k", Owner: "o", Token: 1, TTL: time.Minute}
	for name, call := range map[string]func() error{
		"empty key": func() error { _, err := l.Acquire(ctx, "", time.Minute, nil); return err },
		"long key":  func() error { _, err := l.Acquire(ctx, strings.Repeat("k", 17), time.Minute, nil); return err },
		"short ttl": func() error { _, err := l.Acquire(ctx, "k", time.Millisecond, nil); return err },
		"long ttl":  func() error { _, err := l.Acquire(ctx, "k", 2*time.Hour, nil); return err },
		"long owner": func() error {
			_, err := l.Acquire(ctx, "k", time.Minute, &fence.AcquireOptions{Owner: strings.Repeat("o", 41)})
			return err
		},
		"renew token 0":  func() error { bad := good; bad.Token = 0; _, err := l.Renew(ctx, bad); return err },
		"renew no owner": func() error { bad := good; bad.Owner = ""; _, err := l.Renew(ctx, bad); return err },
		"renew bad ttl":  func() error { bad := good; bad.TTL = 2 * time.Hour; _, err := l.Renew(ctx, bad); return err },
		"release no key": func() error { bad := good; bad.Key = ""; return l.Release(ctx, bad) },
		"break NUL key":  func() error { return l.Break(ctx, "a\x00b") },
		"inspect bad":    func() error { _, err := l.Inspect(ctx, "\xff"); return err },
	} {
		err := call()
		if !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s: err = %v; want ErrInvalid", name, err)
		}
		if _, ok := errors.AsType[*fence.OpError](err); !ok {
			t.Errorf("%s: err %T is not an *OpError", name, err)
		}
	}
	if n := d.callCount(); n != 0 {
		t.Errorf("the driver was called %d times for invalid input; want 0", n)
	}
}

func TestValidUntilIsSendTimePlusTTLAtMost(t *testing.T) {
	t.Parallel()
	l, d, clock := newOneKey(t)
	ctx := context.Background()
	sent := clock.Now()
	d.acquire = func(key, owner string, ttl time.Duration) (fence.Lease, error) {
		clock.Advance(time.Second) // the answer takes a second
		return fence.Lease{Key: key, Owner: owner, Token: 1, ValidUntil: clock.Now().Add(ttl)}, nil
	}
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := sent.Add(time.Minute); !lease.ValidUntil.Equal(want) {
		t.Errorf("ValidUntil = %v; want the send time plus TTL, %v, not the driver's later one", lease.ValidUntil, want)
	}
	if lease.TTL != time.Minute || lease.Owner == "" {
		t.Errorf("lease = %+v; want TTL 1m and a generated owner", lease)
	}
	early := sent.Add(10 * time.Second)
	d.acquire = func(key, owner string, ttl time.Duration) (fence.Lease, error) {
		return fence.Lease{Key: key, Owner: owner, Token: 2, ValidUntil: early}, nil
	}
	lease, err = l.Acquire(ctx, "j", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !lease.ValidUntil.Equal(early) {
		t.Errorf("ValidUntil = %v; want the driver's earlier %v (a late win) kept", lease.ValidUntil, early)
	}
}

func TestTokenZeroFromTheDriverIsCorrupt(t *testing.T) {
	t.Parallel()
	l, d, _ := newOneKey(t)
	d.acquire = func(key, owner string, ttl time.Duration) (fence.Lease, error) {
		return fence.Lease{Key: key, Owner: owner}, nil
	}
	if _, err := l.Acquire(context.Background(), "k", time.Minute, nil); !errors.Is(err, fence.ErrCorrupt) {
		t.Fatalf("Acquire with a driver issuing token 0 = %v; want ErrCorrupt", err)
	}
}

func TestLeaseThatRanOutLocallyIsRefusedWithoutAsking(t *testing.T) {
	t.Parallel()
	l, d, clock := newOneKey(t)
	ctx := context.Background()
	lease, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(50 * time.Second)
	if _, err := l.Renew(ctx, lease); err != nil {
		t.Fatalf("Renew before expiry: %v", err)
	}
	clock.Advance(50 * time.Second) // past the acquisition copy's ValidUntil, within the renewal
	if err := l.Release(ctx, lease); err != nil {
		t.Fatalf("Release with the acquisition copy within its renewal: %v", err)
	}
	lease, err = l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	before := d.callCount()
	_, rerr := l.Renew(ctx, lease)
	lerr := l.Release(ctx, lease)
	for name, err := range map[string]error{"Renew": rerr, "Release": lerr} {
		if _, ok := errors.AsType[*fence.NotHeldError](err); !ok || !errors.Is(err, fence.ErrNotHeld) {
			t.Errorf("%s of a lease that ran out = %v; want a *NotHeldError", name, err)
		}
	}
	if n := d.callCount() - before; n != 0 {
		t.Errorf("the driver was asked %d times about a lease that ran out locally; want 0", n)
	}
}

func TestErrorsNameBackendOpAndKey(t *testing.T) {
	t.Parallel()
	l, d, _ := newOneKey(t)
	ctx := context.Background()
	if _, err := l.Acquire(ctx, "k", time.Minute, &fence.AcquireOptions{Owner: "a"}); err != nil {
		t.Fatal(err)
	}
	_, err := l.Acquire(ctx, "k", time.Minute, nil)
	want := `fence/onekey: acquire "k": held by another owner (token 1)`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Acquire of a held key = %v; want %q", err, want)
	}
	he, ok := errors.AsType[*fence.HeldError](err)
	if !ok || he.Key != "k" || he.Owner != "a" {
		t.Errorf("HeldError = %+v; want key k (filled in by the layer) and owner a", he)
	}
	d.renew = errors.New("connection reset")
	lease := fence.Lease{Key: "k", Owner: "a", Token: 1, TTL: time.Minute, ValidUntil: time.Unix(2_000_000, 0)}
	_, err = l.Renew(ctx, lease)
	if want := `fence/onekey: renew "k": connection reset`; err == nil || err.Error() != want {
		t.Errorf("Renew = %v; want %q", err, want)
	}
}

func TestErrorAfterContextEndedWrapsIt(t *testing.T) {
	t.Parallel()
	l, d, _ := newOneKey(t)
	ctx, cancel := context.WithCancel(context.Background())
	d.renew = errors.New("connection closed")
	lease := fence.Lease{Key: "k", Owner: "a", Token: 1, TTL: time.Minute, ValidUntil: time.Unix(2_000_000, 0)}
	d.acquire = func(key, owner string, ttl time.Duration) (fence.Lease, error) {
		cancel() // ctx ends while the request is in flight
		return fence.Lease{}, errors.New("connection closed")
	}
	_, err := l.Acquire(ctx, "k", time.Minute, nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "connection closed") {
		t.Errorf("Acquire whose ctx ended in flight = %v; want it to wrap context.Canceled and keep the cause", err)
	}
	before := d.callCount()
	if _, err := l.Renew(ctx, lease); !errors.Is(err, context.Canceled) {
		t.Errorf("Renew on an ended ctx = %v; want context.Canceled", err)
	}
	if d.callCount() != before {
		t.Error("Renew on an ended ctx reached the driver")
	}
}

// TestErrorAtTheDeadlineWrapsIt: a client that sets its connection's
// deadline to ctx's fails with a network timeout at that instant, before
// ctx's timer marks it done; the error still matches
// context.DeadlineExceeded.
func TestErrorAtTheDeadlineWrapsIt(t *testing.T) {
	t.Parallel()
	l, d, _ := newOneKey(t)
	d.acquire = func(key, owner string, ttl time.Duration) (fence.Lease, error) {
		return fence.Lease{}, os.ErrDeadlineExceeded
	}
	ctx := timerNotYetFired{Context: t.Context(), deadline: time.Now()}
	if _, err := l.Acquire(ctx, "k", time.Minute, nil); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Acquire that failed at its deadline = %v; want it to match context.DeadlineExceeded and keep the cause", err)
	}
}

// timerNotYetFired is a context whose deadline has passed and whose Err
// does not say so yet.
type timerNotYetFired struct {
	context.Context
	deadline time.Time
}

func (c timerNotYetFired) Deadline() (time.Time, bool) { return c.deadline, true }

func TestNewLockerChecksDriverInfo(t *testing.T) {
	t.Parallel()
	if _, err := driver.NewLocker(nil, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("NewLocker(nil) = %v; want ErrInvalid", err)
	}
	for _, info := range []driver.Info{
		{MaxKeyLen: 1, MinTTL: 1, MaxTTL: 1},
		{Name: "a b", MaxKeyLen: 1, MinTTL: 1, MaxTTL: 1},
		{Name: "x", MinTTL: 1, MaxTTL: 1},
		{Name: "x", MaxKeyLen: 1, MinTTL: 2, MaxTTL: 1},
		{Name: "x", MaxKeyLen: 1},
	} {
		if _, err := driver.NewLocker(infoDriver{info}, nil); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("NewLocker with %+v = %v; want ErrInvalid", info, err)
		}
	}
}

type infoDriver struct{ info driver.Info }

func (d infoDriver) Info() driver.Info { return d.info }
func (infoDriver) Acquire(context.Context, string, string, time.Duration) (fence.Lease, error) {
	return fence.Lease{}, nil
}
func (infoDriver) Renew(context.Context, fence.Lease) error   { return nil }
func (infoDriver) Release(context.Context, fence.Lease) error { return nil }
func (infoDriver) Break(context.Context, string) error        { return nil }
func (infoDriver) Inspect(context.Context, string) (fence.LockInfo, error) {
	return fence.LockInfo{}, nil
}

func TestCreateWithoutSupportIsUnsupported(t *testing.T) {
	t.Parallel()
	l, _, _ := newOneKey(t)
	if err := l.Create(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Create on a driver without Create = %v; want errors.ErrUnsupported", err)
	}
}

func TestARacedAcquireIsTriedOnceMore(t *testing.T) {
	t.Parallel()
	l, d, _ := newOneKey(t)
	races := 1
	d.acquire = func(key, owner string, ttl time.Duration) (fence.Lease, error) {
		if races > 0 {
			races--
			return fence.Lease{}, driver.ErrAcquireRaced
		}
		return fence.Lease{Key: key, Owner: owner, Token: 3}, nil
	}
	if lease, err := l.Acquire(context.Background(), "k", time.Minute, nil); err != nil || lease.Token != 3 {
		t.Fatalf("Acquire after one lost race = %+v, %v; want the second try's token 3", lease, err)
	}
	races = 2
	_, err := l.Acquire(context.Background(), "k", time.Minute, nil)
	he, ok := errors.AsType[*fence.HeldError](err)
	if !ok || he.Key != "k" || he.Token != 0 || errors.Is(err, driver.ErrAcquireRaced) {
		t.Fatalf("Acquire after two lost races = %v; want a *HeldError with the key only", err)
	}
	if n := d.callCount(); n != 4 {
		t.Errorf("the driver was called %d times; want 2 per Acquire", n)
	}
}
