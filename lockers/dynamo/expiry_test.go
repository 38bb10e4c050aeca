package dynamo

import (
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// twoLockers returns a holder and a contender on one fresh table, each
// with its own fake clock and its own Observations (two processes).
func twoLockers(t *testing.T, trusted bool, skew time.Duration) (holder, contender *testLocker, hc, cc *clocktest.Fake) {
	t.Helper()
	client := emulators.DynamoClient(t, nil)
	table := newTable(t, client, nil)
	start := time.Now().Truncate(time.Millisecond)
	hc, cc = clocktest.New(start), clocktest.New(start)
	holder = newLocker(t, client, table, &Options{Clock: hc, TrustedClock: trusted, MaxClockSkew: skew})
	contender = newLocker(t, client, table, &Options{Clock: cc, TrustedClock: trusted, MaxClockSkew: skew})
	return holder, contender, hc, cc
}

func wantHeld(t *testing.T, l *testLocker, key, why string) {
	t.Helper()
	if lease, err := l.Acquire(t.Context(), key, MinTTL, nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Acquire %s = token %d, %v; want an error matching ErrHeld", why, lease.Token, err)
	}
}

func wantTaken(t *testing.T, l *testLocker, key string, token fence.Token, why string) fence.Lease {
	t.Helper()
	lease, err := l.Acquire(t.Context(), key, MinTTL, nil)
	if err != nil || lease.Token != token {
		t.Fatalf("Acquire %s = token %d, %v; want token %d", why, lease.Token, err, token)
	}
	return lease
}

// TestClockFreeTakeover checks that a contender takes a key over only
// after it has itself seen one version for a full lease on its own clock,
// whatever the holder's clock says, and that a renewal restarts the wait.
func TestClockFreeTakeover(t *testing.T) {
	t.Parallel()
	t.Run("WaitsAFullLeaseFromItsFirstLook", func(t *testing.T) {
		t.Parallel()
		holder, contender, hc, cc := twoLockers(t, false, 0)
		lease, err := holder.Acquire(t.Context(), "job", MinTTL, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The holder's lease ran out long ago on its clock; the contender
		// has never looked, so it starts timing now.
		hc.Advance(time.Hour)
		cc.Advance(time.Hour)
		wantHeld(t, contender, "job", "on the first look")
		cc.Advance(MinTTL - time.Millisecond)
		wantHeld(t, contender, "job", "a millisecond before a full lease from the first look")
		if contender.d.obs.Len() != 1 {
			t.Errorf("the contender remembers %d keys; want 1", contender.d.obs.Len())
		}
		cc.Advance(time.Millisecond)
		wantTaken(t, contender, "job", lease.Token+1, "a full lease after the first look")
		if contender.d.obs.Len() != 0 {
			t.Errorf("after taking the key the contender remembers %d keys; want 0", contender.d.obs.Len())
		}
		// The old holder's own clock says its lease ran out: no write.
		_, err = holder.Renew(t.Context(), lease)
		if !errors.Is(err, fence.ErrNotHeld) {
			t.Fatalf("Renew of the lease taken over: %v; want ErrNotHeld", err)
		}
	})
	t.Run("InspectStartsTheWait", func(t *testing.T) {
		t.Parallel()
		holder, contender, _, cc := twoLockers(t, false, 0)
		if _, err := holder.Acquire(t.Context(), "job", MinTTL, nil); err != nil {
			t.Fatal(err)
		}
		info, err := contender.Inspect(t.Context(), "job")
		if err != nil || !info.Held || !info.ValidUntil.Equal(cc.Now().Add(MinTTL)) {
			t.Fatalf("Inspect = %+v, %v; want held until a lease from now", info, err)
		}
		cc.Advance(MinTTL)
		if info, err = contender.Inspect(t.Context(), "job"); err != nil || info.Held {
			t.Fatalf("Inspect a lease after the first look = %+v, %v; want free", info, err)
		}
		wantTaken(t, contender, "job", 2, "after Inspect saw the lease run out")
	})
	t.Run("RenewalRestartsTheWait", func(t *testing.T) {
		t.Parallel()
		holder, contender, hc, cc := twoLockers(t, false, 0)
		lease, err := holder.Acquire(t.Context(), "job", MinTTL, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantHeld(t, contender, "job", "on the first look")
		cc.Advance(MinTTL / 2)
		hc.Advance(MinTTL / 2)
		if lease, err = holder.Renew(t.Context(), lease); err != nil {
			t.Fatal(err)
		}
		cc.Advance(MinTTL / 2)
		wantHeld(t, contender, "job", "a lease after the first look, with a renewal in between")
		cc.Advance(MinTTL - time.Millisecond)
		wantHeld(t, contender, "job", "just under a lease after seeing the renewed version")
		cc.Advance(time.Millisecond)
		wantTaken(t, contender, "job", lease.Token+1, "a lease after seeing the renewed version")
	})
	t.Run("ObservationsAreShared", func(t *testing.T) {
		t.Parallel()
		holder, contender, _, cc := twoLockers(t, false, 0)
		if _, err := holder.Acquire(t.Context(), "job", MinTTL, nil); err != nil {
			t.Fatal(err)
		}
		wantHeld(t, contender, "job", "on the first look")
		cc.Advance(MinTTL)
		sibling := newSeenLocker(t, contender.d.api, contender.d.table, &Options{Clock: cc}, contender.d.obs)
		wantTaken(t, sibling, "job", 2, "by a Locker sharing the Observations that timed the lease")
	})
}

// TestTrustedClockTakeover checks that in trusted-clock mode a contender
// takes an expired lease over once the stored expiry plus MaxClockSkew has
// passed on its clock, without looking first, and not a millisecond
// before.
func TestTrustedClockTakeover(t *testing.T) {
	t.Parallel()
	const skew = 300 * time.Millisecond
	holder, contender, _, cc := twoLockers(t, true, skew)
	lease, err := holder.Acquire(t.Context(), "job", MinTTL, nil)
	if err != nil {
		t.Fatal(err)
	}
	cc.Advance(MinTTL + skew)
	info, err := contender.Inspect(t.Context(), "job")
	if err != nil || !info.Held || !info.ValidUntil.IsZero() {
		t.Fatalf("Inspect within the skew allowance = %+v, %v; want held, with no ValidUntil", info, err)
	}
	wantHeld(t, contender, "job", "at the stored expiry plus the skew")
	cc.Advance(time.Millisecond)
	wantTaken(t, contender, "job", lease.Token+1, "a millisecond after the stored expiry plus the skew")
}

// TestTrustedClockAgreesWithTheStore checks that, in trusted-clock mode,
// what a contender judges locally (Inspect) agrees with the store's
// condition (Acquire), which compares whole milliseconds, for clocks and
// skews that are not whole milliseconds: Inspect reports the key free
// exactly when Acquire takes it, less than 3 ms after the holder's
// ValidUntil plus the skew (the stored expiry and the skew are rounded up
// to whole milliseconds, and the store's comparison is strict), never
// before.
func TestTrustedClockAgreesWithTheStore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		skew   time.Duration
		offset time.Duration // of the holder's send time within a millisecond
	}{{300 * time.Millisecond, 0}, {250*time.Millisecond + 500*time.Microsecond, 0}, {0, 300 * time.Microsecond}, {7*time.Millisecond + time.Nanosecond, 999 * time.Microsecond}} {
		holder, contender, hc, cc := twoLockers(t, true, c.skew)
		hc.Advance(c.offset)
		cc.Advance(c.offset)
		lease, err := holder.Acquire(t.Context(), "job", MinTTL, nil)
		if err != nil {
			t.Fatal(err)
		}
		expiry := lease.ValidUntil.Add(c.skew)
		cc.Advance(MinTTL + c.skew - 2*time.Millisecond)
		for step := 0; ; step++ {
			if step > 20 {
				t.Fatalf("skew %v: not taken over %v after the expiry plus skew", c.skew, cc.Now().Sub(expiry))
			}
			info, err := contender.Inspect(t.Context(), "job")
			if err != nil {
				t.Fatal(err)
			}
			got, err := contender.Acquire(t.Context(), "job", MinTTL, nil)
			if info.Held {
				if !errors.Is(err, fence.ErrHeld) {
					t.Fatalf("skew %v, %v after the expiry plus skew: Inspect says held, Acquire = %+v, %v", c.skew, cc.Now().Sub(expiry), got, err)
				}
				cc.Advance(250 * time.Microsecond)
				continue
			}
			if err != nil || got.Token != lease.Token+1 {
				t.Fatalf("skew %v, %v after the expiry plus skew: Inspect says free, Acquire = %+v, %v", c.skew, cc.Now().Sub(expiry), got, err)
			}
			if late := cc.Now().Sub(expiry); late < 0 || late >= 3*time.Millisecond {
				t.Errorf("skew %v: taken over %v after the expiry plus skew; want within 3ms after", c.skew, late)
			}
			break
		}
	}
}

// TestExpiredLeaseIsNotWritten checks that Renew and Release of a lease
// past its ValidUntil on the holder's clock fail without a request, so an
// expired holder cannot revive or free a key that another may hold.
func TestExpiredLeaseIsNotWritten(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{false, true} {
		f := newFaulty(t)
		client := emulators.DynamoClient(t, f)
		table := newTable(t, client, nil)
		clock := clocktest.New(time.Now())
		l := newLocker(t, client, table, &Options{Clock: clock, TrustedClock: trusted})
		lease, err := l.Acquire(t.Context(), "job", MinTTL, nil)
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(MinTTL)
		f.lose("", 0) // resets the counts
		if _, err := l.Renew(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
			t.Errorf("Renew at ValidUntil: %v; want ErrNotHeld", err)
		}
		if err := l.Release(t.Context(), lease); !errors.Is(err, fence.ErrNotHeld) {
			t.Errorf("Release at ValidUntil: %v; want ErrNotHeld", err)
		}
		if n := f.count("UpdateItem") + f.count("GetItem"); n != 0 {
			t.Errorf("Renew and Release of an expired lease made %d requests; want 0", n)
		}
	}
}

// TestFailedAcquireWritesNothing checks that Acquire of a held key leaves
// the item as it was: same version, so the holder's observers keep
// timing it.
func TestFailedAcquireWritesNothing(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{false, true} {
		client := emulators.DynamoClient(t, nil)
		table := newTable(t, client, nil)
		l := newLocker(t, client, table, &Options{TrustedClock: trusted})
		if _, err := l.Acquire(t.Context(), "job", time.Minute, nil); err != nil {
			t.Fatal(err)
		}
		before := render(getItem(t, client, table, "job"))
		for range 3 {
			if _, err := l.Acquire(t.Context(), "job", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
				t.Fatalf("Acquire of a held key: %v; want ErrHeld", err)
			}
		}
		if after := render(getItem(t, client, table, "job")); after != before {
			t.Fatalf("failed Acquires changed the item:\n%s\n%s", before, after)
		}
	}
}
