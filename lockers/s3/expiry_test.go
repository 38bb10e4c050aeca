package s3

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
)

// Two processes, each with its own memory, on one fake clock: the clock
// rate is shared, nothing else.

func wantHeld(t *testing.T, l *testLocker, key string, holder fence.Lease, until time.Time) {
	t.Helper()
	_, err := l.Acquire(t.Context(), key, MinTTL, nil)
	he, ok := errors.AsType[*fence.HeldError](err)
	if !ok || he.Owner != holder.Owner || he.Token != holder.Token || !he.ValidUntil.Equal(until) {
		t.Fatalf("Acquire(%q) returned %v; want a HeldError naming %q, token %d, until %v", key, err, holder.Owner, holder.Token, until)
	}
}

func TestClockFreeTakeoverNeedsAFullLeaseOfWatching(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	clock := clocktest.New(time.Now())
	counted := &counter{next: http.DefaultTransport}
	holder := newLocker(t, bucket, counted, fakeOptions(clock))
	contender := newLocker(t, bucket, nil, fakeOptions(clock))
	lease := acquire(t, holder, "k", MinTTL)

	// The first look starts the contender's wait, however old the lease.
	clock.Advance(MinTTL / 2)
	firstLook := clock.Now()
	wantHeld(t, contender, "k", lease, firstLook.Add(MinTTL))
	clock.Advance(MinTTL - time.Nanosecond)
	wantHeld(t, contender, "k", lease, firstLook.Add(MinTTL))
	if info := inspect(t, contender, "k"); !info.Held {
		t.Fatalf("Inspect a nanosecond before the watch ends = %+v; want held", info)
	}
	clock.Advance(time.Nanosecond)
	if info := inspect(t, contender, "k"); info.Held || info.Token != lease.Token {
		t.Fatalf("Inspect after a full lease of watching = %+v; want free with the old token", info)
	}
	next := acquire(t, contender, "k", MinTTL)
	if next.Token != lease.Token+1 {
		t.Fatalf("takeover token %d; want %d", next.Token, lease.Token+1)
	}

	// The holder's lease ran out on its own clock long ago: its Renew
	// and Release fail without a request.
	before := counted.total()
	if _, err := holder.Renew(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew of a lease past its ValidUntil returned %v; want ErrNotHeld", err)
	}
	if err := holder.Release(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Release of a lease past its ValidUntil returned %v; want ErrNotHeld", err)
	}
	if n := counted.total() - before; n != 0 {
		t.Fatalf("Renew and Release of an expired lease made %d requests; want none", n)
	}
	if info := inspect(t, holder, "k"); !info.Held || info.Owner != next.Owner {
		t.Fatalf("Inspect = %+v; want the key held by the new owner %q", info, next.Owner)
	}
}

// The holder's lease ends at its send time plus TTL, on its clock; a
// renewal a nanosecond before that succeeds, at that instant it fails.
func TestHolderCountsItsLeaseFromTheSendTime(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	clock := clocktest.New(time.Now())
	l := newLocker(t, bucket, nil, fakeOptions(clock))
	sent := clock.Now()
	lease := acquire(t, l, "k", MinTTL)
	if !lease.ValidUntil.Equal(sent.Add(MinTTL)) {
		t.Fatalf("ValidUntil = %v; want the send time plus TTL, %v", lease.ValidUntil, sent.Add(MinTTL))
	}
	clock.Advance(MinTTL - time.Nanosecond)
	renewed, err := l.Renew(t.Context(), lease)
	if err != nil || !renewed.ValidUntil.Equal(clock.Now().Add(MinTTL)) {
		t.Fatalf("Renew just in time = %+v, %v; want ValidUntil %v", renewed, err, clock.Now().Add(MinTTL))
	}
	clock.Advance(MinTTL)
	if _, err := l.Renew(t.Context(), renewed); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew at ValidUntil returned %v; want ErrNotHeld", err)
	}
	if _, err := l.Renew(t.Context(), fence.Lease{Key: "k", Owner: lease.Owner, Token: lease.Token, TTL: MinTTL}); !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Renew of a lease without ValidUntil returned %v; want ErrNotHeld", err)
	}
}

// Every renewal writes a new ETag, so a watcher starts again and a
// holder that keeps renewing keeps the key.
func TestRenewRestartsTheWatch(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	clock := clocktest.New(time.Now())
	holder := newLocker(t, bucket, nil, fakeOptions(clock))
	contender := newLocker(t, bucket, nil, fakeOptions(clock))
	lease := acquire(t, holder, "k", MinTTL)
	inspect(t, contender, "k")
	start := clock.Now()
	for clock.Now().Sub(start) <= 3*MinTTL {
		// Renewals every 3/4 TTL, the contender looking in between: it
		// never sees one ETag for a full TTL.
		clock.Advance(MinTTL / 4)
		var err error
		if lease, err = holder.Renew(t.Context(), lease); err != nil {
			t.Fatalf("Renew: %v", err)
		}
		clock.Advance(MinTTL / 4)
		wantHeld(t, contender, "k", lease, clock.Now().Add(MinTTL))
		clock.Advance(MinTTL / 4)
		wantHeld(t, contender, "k", lease, clock.Now().Add(MinTTL*3/4))
	}
	clock.Advance(MinTTL)
	next := acquire(t, contender, "k", MinTTL)
	if next.Token != lease.Token+1 {
		t.Fatalf("takeover token %d; want %d", next.Token, lease.Token+1)
	}
}

// A watch of an older ETag does not count for a newer one: a
// contender that saw the lease before a renewal must see the new
// ETag for a full lease too, even when it tries only once more.
func TestStaleWatchDoesNotTakeOverARenewedLease(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	clock := clocktest.New(time.Now())
	holder := newLocker(t, bucket, nil, fakeOptions(clock))
	contender := newLocker(t, bucket, nil, fakeOptions(clock))
	lease := acquire(t, holder, "k", MinTTL)
	inspect(t, contender, "k")
	clock.Advance(MinTTL / 2)
	lease, err := holder.Renew(t.Context(), lease)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(MinTTL / 2) // the contender's watch of the old ETag is complete
	wantHeld(t, contender, "k", lease, clock.Now().Add(MinTTL))
}

func TestTrustedClockTakesOverAfterExpiryPlusSkew(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	clock := clocktest.New(time.Now())
	const skew = time.Second
	trusted := func() *testLocker {
		o := fakeOptions(clock)
		o.TrustedClock, o.MaxClockSkew = true, skew
		return newLocker(t, bucket, nil, o)
	}
	holder := trusted()
	lease := acquire(t, holder, "k", MinTTL)
	clock.Advance(MinTTL)
	// Within the skew allowance: still held, expiry unknown.
	wantHeld(t, trusted(), "k", lease, time.Time{})
	clock.Advance(skew)
	// A Locker that never looked at the key takes it at once.
	next := acquire(t, trusted(), "k", MinTTL)
	if next.Token != lease.Token+1 {
		t.Fatalf("takeover token %d; want %d", next.Token, lease.Token+1)
	}
}

func TestTrustedClockWatchesRecordsWithoutExpiry(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	clock := clocktest.New(time.Now())
	holder := newLocker(t, bucket, nil, fakeOptions(clock)) // clock-free: no expiry stored
	o := fakeOptions(clock)
	o.TrustedClock = true
	contender := newLocker(t, bucket, nil, o)
	lease := acquire(t, holder, "k", MinTTL)
	clock.Advance(10 * MinTTL)
	wantHeld(t, contender, "k", lease, clock.Now().Add(MinTTL))
	clock.Advance(MinTTL)
	acquire(t, contender, "k", MinTTL)
}
