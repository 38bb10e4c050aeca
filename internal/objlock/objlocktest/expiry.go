package objlocktest

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
)

// RunExpiry checks when a lease runs out, in clock-free and
// trusted-clock mode: two processes, each with its own memory, on one
// fake clock (the clock rate is shared, nothing else).
func RunExpiry(t *testing.T, h Harness) {
	runAll(t, h, []test{
		{"ClockFreeTakeoverNeedsAFullLeaseOfWatching", expiryClockFreeTakeoverNeedsAFullLeaseOfWatching},
		{"HolderCountsItsLeaseFromTheSendTime", expiryHolderCountsItsLeaseFromTheSendTime},
		{"RenewRestartsTheWatch", expiryRenewRestartsTheWatch},
		{"StaleWatchDoesNotTakeOverARenewedLease", expiryStaleWatchDoesNotTakeOverARenewedLease},
		{"TrustedClockTakesOverAfterExpiryPlusSkew", expiryTrustedClockTakesOverAfterExpiryPlusSkew},
		{"TrustedClockWatchesRecordsWithoutExpiry", expiryTrustedClockWatchesRecordsWithoutExpiry},
		{"PublishIsWatchedNoLongerThanARenewal", expiryPublishIsWatchedNoLongerThanARenewal},
		{"TrustedClockPublishKeepsTheExpiry", expiryTrustedClockPublishKeepsTheExpiry},
	})
}

func wantHeld(t *testing.T, h Harness, l *Locker, key string, holder fence.Lease, until time.Time) {
	t.Helper()
	_, err := l.Acquire(t.Context(), key, h.MinTTL, nil)
	he, ok := errors.AsType[*fence.HeldError](err)
	if !ok || he.Owner != holder.Owner || he.Token != holder.Token || !he.ValidUntil.Equal(until) {
		t.Fatalf("Acquire(%q) returned %v; want a HeldError naming %q, token %d, until %v", key, err, holder.Owner, holder.Token, until)
	}
}

func expiryClockFreeTakeoverNeedsAFullLeaseOfWatching(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	clock := clocktest.New(time.Now())
	counted := &Counter{Next: http.DefaultTransport, IsWrite: h.IsWrite}
	holder := h.NewLocker(t, bucket, counted, fakeOptions(clock))
	contender := h.NewLocker(t, bucket, nil, fakeOptions(clock))
	lease := Acquire(t, holder, "k", h.MinTTL)

	// The first look starts the contender's wait, however old the lease.
	clock.Advance(h.MinTTL / 2)
	firstLook := clock.Now()
	wantHeld(t, h, contender, "k", lease, firstLook.Add(h.MinTTL))
	clock.Advance(h.MinTTL - time.Nanosecond)
	wantHeld(t, h, contender, "k", lease, firstLook.Add(h.MinTTL))
	if info := Inspect(t, contender, "k"); !info.Held {
		t.Fatalf("Inspect a nanosecond before the watch ends = %+v; want held", info)
	}
	clock.Advance(time.Nanosecond)
	if info := Inspect(t, contender, "k"); info.Held || info.Token != lease.Token {
		t.Fatalf("Inspect after a full lease of watching = %+v; want free with the old token", info)
	}
	next := Acquire(t, contender, "k", h.MinTTL)
	if next.Token != lease.Token+1 {
		t.Fatalf("takeover token %d; want %d", next.Token, lease.Token+1)
	}

	// The holder's lease ran out on its own clock long ago: its Renew
	// and Release fail without a request.
	before := counted.Total()
	if _, err := holder.Renew(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew of a lease past its ValidUntil returned %v; want ErrNotHeld", err)
	}
	if err := holder.Release(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Release of a lease past its ValidUntil returned %v; want ErrNotHeld", err)
	}
	if n := counted.Total() - before; n != 0 {
		t.Fatalf("Renew and Release of an expired lease made %d requests; want none", n)
	}
	if info := Inspect(t, holder, "k"); !info.Held || info.Owner != next.Owner {
		t.Fatalf("Inspect = %+v; want the key held by the new owner %q", info, next.Owner)
	}
}

// The holder's lease ends at its send time plus TTL, on its clock; a
// renewal a nanosecond before that succeeds, at that instant it fails.
func expiryHolderCountsItsLeaseFromTheSendTime(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	clock := clocktest.New(time.Now())
	l := h.NewLocker(t, bucket, nil, fakeOptions(clock))
	sent := clock.Now()
	lease := Acquire(t, l, "k", h.MinTTL)
	if !lease.ValidUntil.Equal(sent.Add(h.MinTTL)) {
		t.Fatalf("ValidUntil = %v; want the send time plus TTL, %v", lease.ValidUntil, sent.Add(h.MinTTL))
	}
	clock.Advance(h.MinTTL - time.Nanosecond)
	renewed, err := l.Renew(t.Context(), lease)
	if err != nil || !renewed.ValidUntil.Equal(clock.Now().Add(h.MinTTL)) {
		t.Fatalf("Renew just in time = %+v, %v; want ValidUntil %v", renewed, err, clock.Now().Add(h.MinTTL))
	}
	clock.Advance(h.MinTTL)
	if _, err := l.Renew(t.Context(), renewed); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew at ValidUntil returned %v; want ErrNotHeld", err)
	}
	if _, err := l.Renew(t.Context(), fence.Lease{Key: "k", Owner: lease.Owner, Token: lease.Token, TTL: h.MinTTL}); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew of a lease without ValidUntil returned %v; want ErrNotHeld", err)
	}
}

// Every renewal writes a new version, so a watcher starts again and a
// holder that keeps renewing keeps the key.
func expiryRenewRestartsTheWatch(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	clock := clocktest.New(time.Now())
	holder := h.NewLocker(t, bucket, nil, fakeOptions(clock))
	contender := h.NewLocker(t, bucket, nil, fakeOptions(clock))
	lease := Acquire(t, holder, "k", h.MinTTL)
	Inspect(t, contender, "k")
	start := clock.Now()
	for clock.Now().Sub(start) <= 3*h.MinTTL {
		// Renewals every 3/4 TTL, the contender looking in between: it
		// never sees one version for a full TTL.
		clock.Advance(h.MinTTL / 4)
		var err error
		if lease, err = holder.Renew(t.Context(), lease); err != nil {
			t.Fatalf("Renew: %v", err)
		}
		clock.Advance(h.MinTTL / 4)
		wantHeld(t, h, contender, "k", lease, clock.Now().Add(h.MinTTL))
		clock.Advance(h.MinTTL / 4)
		wantHeld(t, h, contender, "k", lease, clock.Now().Add(h.MinTTL*3/4))
	}
	clock.Advance(h.MinTTL)
	next := Acquire(t, contender, "k", h.MinTTL)
	if next.Token != lease.Token+1 {
		t.Fatalf("takeover token %d; want %d", next.Token, lease.Token+1)
	}
}

// A watch of an older version does not count for a newer one: a
// contender that saw the lease before a renewal must see the new
// version for a full lease too, even when it tries only once more.
func expiryStaleWatchDoesNotTakeOverARenewedLease(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	clock := clocktest.New(time.Now())
	holder := h.NewLocker(t, bucket, nil, fakeOptions(clock))
	contender := h.NewLocker(t, bucket, nil, fakeOptions(clock))
	lease := Acquire(t, holder, "k", h.MinTTL)
	Inspect(t, contender, "k")
	clock.Advance(h.MinTTL / 2)
	lease, err := holder.Renew(t.Context(), lease)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(h.MinTTL / 2) // the contender's watch of the old version is complete
	wantHeld(t, h, contender, "k", lease, clock.Now().Add(h.MinTTL))
}

func expiryTrustedClockTakesOverAfterExpiryPlusSkew(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	clock := clocktest.New(time.Now())
	const skew = time.Second
	trusted := func() *Locker {
		o := fakeOptions(clock)
		o.TrustedClock, o.MaxClockSkew = true, skew
		return h.NewLocker(t, bucket, nil, o)
	}
	holder := trusted()
	lease := Acquire(t, holder, "k", h.MinTTL)
	clock.Advance(h.MinTTL)
	// Within the skew allowance: still held, expiry unknown.
	wantHeld(t, h, trusted(), "k", lease, time.Time{})
	clock.Advance(skew)
	// A Locker that never looked at the key takes it at once.
	next := Acquire(t, trusted(), "k", h.MinTTL)
	if next.Token != lease.Token+1 {
		t.Fatalf("takeover token %d; want %d", next.Token, lease.Token+1)
	}
}

func expiryTrustedClockWatchesRecordsWithoutExpiry(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	clock := clocktest.New(time.Now())
	holder := h.NewLocker(t, bucket, nil, fakeOptions(clock)) // clock-free: no expiry stored
	o := fakeOptions(clock)
	o.TrustedClock = true
	contender := h.NewLocker(t, bucket, nil, o)
	lease := Acquire(t, holder, "k", h.MinTTL)
	clock.Advance(10 * h.MinTTL)
	wantHeld(t, h, contender, "k", lease, clock.Now().Add(h.MinTTL))
	clock.Advance(h.MinTTL)
	Acquire(t, contender, "k", h.MinTTL)
}

// A Publish rewrites the record, so a clock-free watcher sees a new
// version and watches it for a full lease, as it would a renewal sent at
// that moment, and no longer. The holder's own lease is not extended: it
// still ends a TTL after its last renewal's send time. The value stays
// through a renewal and is gone with a takeover.
func expiryPublishIsWatchedNoLongerThanARenewal(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	clock := clocktest.New(time.Now())
	holder := h.NewLocker(t, bucket, nil, fakeOptions(clock))
	contender := h.NewLocker(t, bucket, nil, fakeOptions(clock))
	lease := Acquire(t, holder, "k", h.MinTTL)
	Inspect(t, contender, "k")
	clock.Advance(h.MinTTL / 4)
	renewed, err := holder.Renew(t.Context(), lease)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(h.MinTTL / 4)
	if err := holder.Publish(t.Context(), renewed, "v"); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	published := clock.Now()
	if info := Inspect(t, contender, "k"); !info.Held || info.Value != "v" || !info.ValidUntil.Equal(published.Add(h.MinTTL)) {
		t.Fatalf("Inspect after Publish = %+v; want held with value %q until a lease after the Publish, %v", info, "v", published.Add(h.MinTTL))
	}
	// The holder's lease still ends a TTL after the renewal.
	clock.Advance(renewed.ValidUntil.Sub(clock.Now()))
	if err := holder.Publish(t.Context(), renewed, "late"); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Publish at the renewal's ValidUntil returned %v; want ErrNotHeld", err)
	}
	clock.Advance(published.Add(h.MinTTL).Sub(clock.Now()) - time.Nanosecond)
	wantHeld(t, h, contender, "k", renewed, published.Add(h.MinTTL))
	clock.Advance(time.Nanosecond)
	next := Acquire(t, contender, "k", h.MinTTL)
	if info := Inspect(t, holder, "k"); info.Token != next.Token || info.Value != "" {
		t.Fatalf("after the takeover Inspect = %+v; want token %d and no value", info, next.Token)
	}
	if err := contender.Publish(t.Context(), next, "w"); err != nil {
		t.Fatal(err)
	}
	if next, err = contender.Renew(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	if info := Inspect(t, holder, "k"); info.Value != "w" {
		t.Fatalf("after a renewal the value is %q; want %q", info.Value, "w")
	}
}

// In trusted-clock mode a Publish keeps the stored expiry: a Locker that
// never looked takes the key over at the last renewal's expiry plus the
// skew, however late the Publish.
func expiryTrustedClockPublishKeepsTheExpiry(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	clock := clocktest.New(time.Now())
	trusted := func() *Locker {
		o := fakeOptions(clock)
		o.TrustedClock = true
		return h.NewLocker(t, bucket, nil, o)
	}
	holder := trusted()
	lease := Acquire(t, holder, "k", h.MinTTL)
	clock.Advance(h.MinTTL - time.Millisecond)
	if err := holder.Publish(t.Context(), lease, "v"); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	clock.Advance(time.Millisecond)
	next := Acquire(t, trusted(), "k", h.MinTTL)
	if next.Token != lease.Token+1 {
		t.Fatalf("takeover token %d; want %d", next.Token, lease.Token+1)
	}
}
