package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

func TestLeaseLifecycle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := newTable(t, newPool(t, 2, nil))
	key := "job/1"

	first, err := l.Acquire(ctx, key, time.Minute, nil)
	if err != nil {
		t.Fatalf("first Acquire: %v", err)
	}
	if first.Token != 1 || first.Key != key || first.Owner == "" || first.TTL != time.Minute {
		t.Fatalf("first lease = %+v, want token 1 on %q with an owner", first, key)
	}

	_, err = l.Acquire(ctx, key, time.Minute, &fence.AcquireOptions{Owner: "other"})
	var held *fence.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("Acquire of a held key: %v, want a *fence.HeldError", err)
	}
	if held.Owner != first.Owner || held.Token != first.Token || held.Key != key {
		t.Errorf("HeldError = %+v, want holder %q token %d", held, first.Owner, first.Token)
	}
	if d := held.ValidUntil.Sub(first.ValidUntil); d < -10*time.Second || d > 10*time.Second {
		t.Errorf("HeldError.ValidUntil %v is %v away from the lease's %v", held.ValidUntil, d, first.ValidUntil)
	}

	info, err := l.Inspect(ctx, key)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if !info.Held || info.Owner != first.Owner || info.Token != 1 || info.ValidUntil.IsZero() {
		t.Errorf("Inspect of a held key = %+v", info)
	}

	renewed, err := l.Renew(ctx, first)
	if err != nil {
		t.Fatalf("Renew: %v", err)
	}
	if renewed.Token != first.Token || renewed.ValidUntil.Before(first.ValidUntil) {
		t.Errorf("Renew = %+v, want the same token and a later ValidUntil than %v", renewed, first.ValidUntil)
	}

	if err := l.Release(ctx, renewed); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := l.Release(ctx, renewed); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("second Release: %v, want ErrNotHeld", err)
	}
	if _, err := l.Renew(ctx, renewed); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("Renew after Release: %v, want ErrNotHeld", err)
	}
	info, err = l.Inspect(ctx, key)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if info.Held || info.Token != 1 || info.Owner != first.Owner || !info.ValidUntil.IsZero() {
		t.Errorf("Inspect of a released key = %+v, want free, last token 1", info)
	}

	second, err := l.Acquire(ctx, key, time.Minute, &fence.AcquireOptions{Owner: "second"})
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	if second.Token != 2 || second.Owner != "second" {
		t.Errorf("lease after Release = %+v, want token 2 owned by second", second)
	}
	if err := l.Release(ctx, first); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("Release of a taken-over lease: %v, want ErrNotHeld", err)
	}

	if err := l.Break(ctx, key); err != nil {
		t.Fatalf("Break: %v", err)
	}
	if err := l.Break(ctx, key); err != nil {
		t.Fatalf("Break of a free key: %v", err)
	}
	if err := l.Break(ctx, "never-used"); err != nil {
		t.Fatalf("Break of an unknown key: %v", err)
	}
	if err := l.Release(ctx, second); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("Release of a broken lease: %v, want ErrNotHeld", err)
	}
	third, err := l.Acquire(ctx, key, time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire after Break: %v", err)
	}
	if third.Token != 3 {
		t.Errorf("token after Break = %d, want 3", third.Token)
	}

	info, err = l.Inspect(ctx, "never-used")
	if err != nil || info != (fence.LockInfo{Key: "never-used"}) {
		t.Errorf("Inspect of an unknown key = %+v, %v; want only the key", info, err)
	}
}

// TestExpiry sleeps for a short lease: the server's clock measures it.
// The portable layer refuses Renew and Release of the lease on the local
// clock; a copy whose ValidUntil says otherwise (as if the local clock
// were slow) reaches the server, which refuses it too, by its own clock.
func TestExpiry(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := newTable(t, newPool(t, 2, nil))
	lease, err := l.Acquire(ctx, "k", shortTTL, nil)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	time.Sleep(shortTTL + 20*time.Millisecond)

	var local *fence.NotHeldError
	if _, err := l.Renew(ctx, lease); !errors.As(err, &local) {
		t.Errorf("Renew of a lease that ran out locally: %v, want a *fence.NotHeldError", err)
	}
	if err := l.Release(ctx, lease); !errors.As(err, &local) {
		t.Errorf("Release of a lease that ran out locally: %v, want a *fence.NotHeldError", err)
	}
	late := lease
	late.ValidUntil = time.Now().Add(time.Minute)
	if _, err := l.Renew(ctx, late); !errors.Is(err, fence.ErrNotHeld) || errors.As(err, &local) {
		t.Errorf("Renew of a lease expired on the server: %v, want the server's ErrNotHeld", err)
	}
	if err := l.Release(ctx, late); !errors.Is(err, fence.ErrNotHeld) || errors.As(err, &local) {
		t.Errorf("Release of a lease expired on the server: %v, want the server's ErrNotHeld", err)
	}
	if info, err := l.Inspect(ctx, "k"); err != nil || info.Held {
		t.Errorf("Inspect of an expired lease = %+v, %v; want not held", info, err)
	}
	next, err := l.Acquire(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatalf("Acquire of an expired key: %v", err)
	}
	if next.Token != lease.Token+1 {
		t.Errorf("token after expiry = %d, want %d", next.Token, lease.Token+1)
	}
}

func TestInvalidInput(t *testing.T) {
	t.Parallel()
	l := newTable(t, newPool(t, 1, nil))
	good := fence.Lease{Key: "k", Owner: "o", Token: 1, TTL: time.Second}
	with := func(f func(*fence.Lease)) fence.Lease { c := good; f(&c); return c }
	tests := []struct {
		name string
		call func() error
	}{
		{"empty key", func() error { _, err := l.Acquire(t.Context(), "", time.Second, nil); return err }},
		{"long key", func() error {
			_, err := l.Acquire(t.Context(), strings.Repeat("k", MaxKeyLen+1), time.Second, nil)
			return err
		}},
		{"NUL in key", func() error { _, err := l.Acquire(t.Context(), "a\x00b", time.Second, nil); return err }},
		{"bad UTF-8 key", func() error { _, err := l.Acquire(t.Context(), "\xff", time.Second, nil); return err }},
		{"zero TTL", func() error { _, err := l.Acquire(t.Context(), "k", 0, nil); return err }},
		{"TTL too short", func() error { _, err := l.Acquire(t.Context(), "k", MinTTL-1, nil); return err }},
		{"TTL too long", func() error { _, err := l.Acquire(t.Context(), "k", MaxTTL+1, nil); return err }},
		{"NUL in owner", func() error {
			_, err := l.Acquire(t.Context(), "k", time.Second, &fence.AcquireOptions{Owner: "o\x00"})
			return err
		}},
		{"renew token 0", func() error { _, err := l.Renew(t.Context(), with(func(l *fence.Lease) { l.Token = 0 })); return err }},
		{"renew TTL too long", func() error {
			_, err := l.Renew(t.Context(), with(func(l *fence.Lease) { l.TTL = MaxTTL + 1 }))
			return err
		}},
		{"release empty owner", func() error { return l.Release(t.Context(), with(func(l *fence.Lease) { l.Owner = "" })) }},
		{"release long key", func() error {
			return l.Release(t.Context(), with(func(l *fence.Lease) { l.Key = strings.Repeat("k", MaxKeyLen+1) }))
		}},
		{"break empty key", func() error { return l.Break(t.Context(), "") }},
		{"inspect NUL key", func() error { _, err := l.Inspect(t.Context(), "\x00"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, fence.ErrInvalid) {
				t.Errorf("got %v, want an error matching ErrInvalid", err)
			}
		})
	}
	if _, err := l.Acquire(t.Context(), strings.Repeat("é", MaxKeyLen/2), MinTTL, nil); err != nil {
		t.Errorf("Acquire with the longest key and the shortest TTL: %v", err)
	}
}

// TestTokenBeyondBigint: a token PostgreSQL cannot store was never issued
// by this locker, so it is not held. (The lease has a ValidUntil ahead so
// that the portable layer hands it to the driver.)
func TestTokenBeyondBigint(t *testing.T) {
	t.Parallel()
	l := newTable(t, newPool(t, 1, nil))
	lease := fence.Lease{Key: "k", Owner: "o", Token: 1 << 63, TTL: time.Second, ValidUntil: time.Now().Add(time.Minute)}
	if _, err := l.Renew(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("Renew: %v, want ErrNotHeld", err)
	}
	if err := l.Release(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("Release: %v, want ErrNotHeld", err)
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	l := newTable(t, newPool(t, 1, nil))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := l.Acquire(ctx, "k", time.Second, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with a canceled context: %v, want context.Canceled", err)
	}
	if _, err := l.Inspect(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Inspect with a canceled context: %v, want context.Canceled", err)
	}
}

// TestContextEndsInFlight: a statement blocked on a row lock when ctx
// ends is interrupted, and the error matches ctx's.
func TestContextEndsInFlight(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 2, nil)
	name := uniqueName("fence_test_")
	l := newLockerOn(t, pool, name)
	lease, err := l.Acquire(t.Context(), "k", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(t.Context(), "SELECT FROM "+l.quotedTable()+" WHERE key = 'k' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = l.Acquire(ctx, "k", time.Minute, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire blocked when ctx ended: %v, want context.DeadlineExceeded", err)
	}
	if err != nil && !strings.HasPrefix(err.Error(), `fence/postgres: acquire "k": `) {
		t.Errorf("error %q lacks the prefix fence/postgres: acquire \"k\": ", err)
	}
}
