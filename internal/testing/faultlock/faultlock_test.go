package faultlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/faultlock"
	"github.com/fencekit/fence/internal/testing/wraptest"
	"github.com/fencekit/fence/lockers/memory"
)

const ttl = time.Minute

// calls are the Locker methods, each on key k of p (or, for AcquireAll,
// keys "other" and "other2"), with held the lease that holds k (for
// Renew, Release and Publish). AcquireAll is called on the driver, as the
// session's LockAll calls it.
var calls = []struct {
	name string
	call func(ctx context.Context, p *faultlock.Locker, held fence.Lease) error
}{
	{"Acquire", func(ctx context.Context, p *faultlock.Locker, held fence.Lease) error {
		_, err := p.Locker().Acquire(ctx, "other", ttl, nil)
		return err
	}},
	{"Renew", func(ctx context.Context, p *faultlock.Locker, held fence.Lease) error {
		_, err := p.Locker().Renew(ctx, held)
		return err
	}},
	{"Release", func(ctx context.Context, p *faultlock.Locker, held fence.Lease) error {
		return p.Locker().Release(ctx, held)
	}},
	{"Break", func(ctx context.Context, p *faultlock.Locker, held fence.Lease) error {
		return p.Locker().Break(ctx, held.Key)
	}},
	{"Inspect", func(ctx context.Context, p *faultlock.Locker, held fence.Lease) error {
		_, err := p.Locker().Inspect(ctx, held.Key)
		return err
	}},
	{"Publish", func(ctx context.Context, p *faultlock.Locker, held fence.Lease) error {
		return p.Locker().Publish(ctx, held, "10.0.0.7:8080")
	}},
	{"AcquireAll", func(ctx context.Context, p *faultlock.Locker, held fence.Lease) error {
		m, ok := driver.LockerOf(p.Locker()).(driver.MultiAcquirer)
		if !ok {
			return errors.New("the gated driver is no driver.MultiAcquirer")
		}
		_, err := m.AcquireAll(ctx, []string{"other", "other2"}, []string{fence.NewOwnerID(), fence.NewOwnerID()}, ttl)
		return err
	}},
}

// setup returns a store whose key "k" is held, and a faultlock.Locker in
// front of it in mode m.
func setup(t *testing.T, m faultlock.Mode) (*fence.Locker, *faultlock.Locker, fence.Lease) {
	t.Helper()
	store := memory.New(nil)
	p := faultlock.New(store)
	held, err := p.Locker().Acquire(t.Context(), "k", ttl, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Set(m)
	return store, p, held
}

// untouched fails the test unless the store still shows key "k" held by
// held and key "other" never taken.
func untouched(t *testing.T, store *fence.Locker, held fence.Lease) {
	t.Helper()
	k, err := store.Inspect(t.Context(), "k")
	// The store's expiry is measured a moment after the lease's send time:
	// a renewal that got through would have moved it a minute later.
	if err != nil || !k.Held || k.Token != held.Token || k.ValidUntil.Before(held.ValidUntil) || k.ValidUntil.After(held.ValidUntil.Add(time.Second)) {
		t.Errorf("key k is %+v, %v; want it as the lease %+v left it", k, err, held)
	}
	other, err := store.Inspect(t.Context(), "other")
	if err != nil || other.Held || other.Token.Valid() {
		t.Errorf("key other is %+v, %v; want it never taken", other, err)
	}
}

func TestFailing(t *testing.T) {
	t.Parallel()
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store, p, held := setup(t, faultlock.Failing)
			if err := c.call(t.Context(), p, held); !errors.Is(err, faultlock.ErrPartitioned) {
				t.Fatalf("%s: %v, want ErrPartitioned", c.name, err)
			}
			untouched(t, store, held)
		})
	}
}

func TestHanging(t *testing.T) {
	t.Parallel()
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store, p, held := setup(t, faultlock.Hanging)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- c.call(ctx, p, held) }()
			select {
			case err := <-done:
				t.Fatalf("%s returned %v before its context ended", c.name, err)
			case <-time.After(20 * time.Millisecond):
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: %v, want context.Canceled", c.name, err)
			}
			untouched(t, store, held)
		})
	}
}

// Healthy calls reach the store; a Locker healed after a partition
// passes calls through again.
func TestHealthyAndHealed(t *testing.T) {
	t.Parallel()
	for _, healed := range []bool{false, true} {
		name := map[bool]string{false: "healthy", true: "healed"}[healed]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, p, held := setup(t, faultlock.Healthy)
			if healed {
				p.Set(faultlock.Failing)
				if _, err := p.Locker().Inspect(t.Context(), "k"); !errors.Is(err, faultlock.ErrPartitioned) {
					t.Fatalf("Inspect while failing: %v, want ErrPartitioned", err)
				}
				p.Set(faultlock.Healthy)
			}
			if info, err := p.Locker().Inspect(t.Context(), "k"); err != nil || info.Token != held.Token {
				t.Fatalf("Inspect: %+v, %v; want the store's key with token %d", info, err, held.Token)
			}
			renewed, err := p.Locker().Renew(t.Context(), held)
			if err != nil || renewed.Token != held.Token {
				t.Fatalf("Renew: %+v, %v; want the lease renewed", renewed, err)
			}
			if err := p.Locker().Release(t.Context(), renewed); err != nil {
				t.Fatalf("Release: %v", err)
			}
			if info, err := store.Inspect(t.Context(), "k"); err != nil || info.Held {
				t.Fatalf("after Release the store shows %+v, %v; want k free", info, err)
			}
			next, err := p.Locker().Acquire(t.Context(), "k", ttl, nil)
			if err != nil || next.Token <= held.Token {
				t.Fatalf("Acquire: %+v, %v; want a token above %d", next, err, held.Token)
			}
			if err := p.Locker().Break(t.Context(), "k"); err != nil {
				t.Fatalf("Break: %v", err)
			}
			if info, err := store.Inspect(t.Context(), "k"); err != nil || info.Held {
				t.Fatalf("after Break the store shows %+v, %v; want k free", info, err)
			}
		})
	}
}

// The gated Locker keeps the memory driver's Publish and AcquireAll.
func TestCapabilitiesPassed(t *testing.T) {
	t.Parallel()
	wraptest.KeepsCapabilities(t, func(store *fence.Locker) (*fence.Locker, error) {
		return faultlock.New(store).Locker(), nil
	})
}

func TestModeString(t *testing.T) {
	t.Parallel()
	for m, want := range map[faultlock.Mode]string{faultlock.Healthy: "healthy", faultlock.Failing: "failing", faultlock.Hanging: "hanging", 7: "Mode(7)"} {
		if got := m.String(); got != want {
			t.Errorf("Mode(%d).String() = %q, want %q", int(m), got, want)
		}
	}
}
