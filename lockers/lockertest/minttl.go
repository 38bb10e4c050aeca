package lockertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence/driver"
)

// RenewRounds is how many renewals the MinTTL case makes, one every
// MinTTL/3 as a fence.Session does by default: the case lasts about one
// MinTTL, plus the calls.
const RenewRounds = 3

// minTTLCase tests that the shortest lease the backend advertises
// (driver.Info.MinTTL) is one it can keep, and that a shorter one is bad
// input. It takes a lease of MinTTL and renews it RenewRounds times on the
// real clock, every MinTTL/3 and each call bounded by MinTTL/3, as a
// fence.Session with that TTL does by default; the lease must stay held
// throughout. A TTL just below MinTTL (1 ms below, or 1 ns below a MinTTL
// of 1 ms or less) gets fence.ErrInvalid from Acquire and Renew. It runs
// alone: on a harness with a fake clock another case's Expire would end
// the short lease.
func minTTLCase(t *testing.T, s *suite) {
	l, other := s.locker(t), s.locker(t)
	minTTL := driver.InfoOf(l).MinTTL
	below := minTTL - time.Millisecond
	if minTTL <= time.Millisecond {
		below = minTTL - 1
	}
	call := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(t.Context(), minTTL/3)
	}

	refused := s.key(t)
	_, err := l.Acquire(t.Context(), refused, below, nil)
	wantInvalid(t, err, fmt.Sprintf("Acquire with TTL %v, below MinTTL %v", below, minTTL))
	s.wantNeverAcquired(t, other, refused)

	key := s.key(t)
	ctx, cancel := call()
	lease, err := l.Acquire(ctx, key, minTTL, nil)
	cancel()
	if err != nil {
		t.Fatalf("Acquire(%q) with MinTTL %v, bounded by MinTTL/3: %v; MinTTL must be a lease the store can keep", key, minTTL, err)
	}
	for i := range RenewRounds {
		time.Sleep(minTTL / 3)
		ctx, cancel := call()
		renewed, err := l.Renew(ctx, lease)
		cancel()
		if err != nil {
			t.Fatalf("renewal %d of a lease of MinTTL %v, every MinTTL/3 and bounded by MinTTL/3: %v; MinTTL must be a lease the store can keep", i+1, minTTL, err)
		}
		lease = renewed
	}
	bad := lease
	bad.TTL = below
	_, err = l.Renew(t.Context(), bad)
	wantInvalid(t, err, fmt.Sprintf("Renew with TTL %v, below MinTTL %v", below, minTTL))
	// Still held after the renewals, until released.
	s.wantHolder(t, other, lease)
	release(t, l, lease)
}
