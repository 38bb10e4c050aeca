// Package lockertest is the conformance suite every *fence.Locker passes. A
// backend's test is a small Harness and one call to Run; third-party
// backends can import it the same way. A backend is a driver.Locker;
// its Harness.New returns driver.NewLocker over it (or the backend's
// constructor, which does that), so the suite certifies the driver together
// with the portable layer every user gets:
//
//	func TestConformance(t *testing.T) {
//		clock := clocktest.New(time.Now())
//		store := memory.New(&memory.Options{Clock: clock})
//		lockertest.Run(t, lockertest.Harness{
//			New:       func(*testing.T) *fence.Locker { return store },
//			TTL:       time.Hour,
//			ShortTTL:  time.Second,
//			Expire:    func(*testing.T) { clock.Advance(time.Second + time.Millisecond) },
//			Pass:      func(_ *testing.T, d time.Duration) { clock.Advance(d) },
//			MaxKeyLen: memory.MaxKeyLen,
//			Now:       clock.Now,
//		})
//	}
//
// Run has one subtest per sentence of the *fence.Locker contract, named
// Group/Sentence (for example Release/StaleAfterTakeoverLeavesTheNewHolder),
// so a failure names the promise that was broken. The cases run in
// parallel on keys of their own and make no assumption about time beyond
// the Harness: only Expire and Pass let time pass, and no case measures
// how long anything took. Pass serves one case, a job that outlives its
// TTL, which runs alone before the others. One more case runs alone: it
// takes a lease of the backend's driver.Info.MinTTL and renews it on the
// real clock, every MinTTL/3 for about one MinTTL, so the shortest lease a
// backend advertises is one it can keep. Two consequences for a harness:
//
//   - Expire of one case may expire the short leases of every other case,
//     so the suite never relies on a lease of ShortTTL being still held;
//     with a shared fake clock, TTL must be far longer than all the calls
//     of Expire in one run together (about twenty).
//   - On a store that measures expiry itself, Expire sleeps; keep ShortTTL
//     short (a second or less) and the run stays within seconds.
package lockertest

import (
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// Harness tells the suite how to drive one backend.
type Harness struct {
	// New returns a Locker on the backend's store. It may be called many
	// times in one run, also concurrently; lockers from one Harness share
	// the store (the suite makes its keys unique per case).
	New func(t *testing.T) *fence.Locker
	// TTL is a lease duration that does not run out during a case.
	TTL time.Duration
	// ShortTTL is the lease duration of leases the suite lets expire.
	ShortTTL time.Duration
	// Expire returns once every lease of ShortTTL taken so far has expired
	// for every Locker from New: it advances a fake clock, or sleeps.
	Expire func(t *testing.T)
	// Pass lets d pass for every Locker from New and for the store, d
	// being less than ShortTTL: it advances the fake clock by d, or
	// sleeps d. The suite calls it only in a case that runs alone, so
	// that it never expires the leases of other cases.
	Pass func(t *testing.T, d time.Duration)
	// MaxKeyLen is the longest key the backend accepts, in bytes.
	MaxKeyLen int
	// BadTTLs are durations the backend must refuse with fence.ErrInvalid
	// (at least 0 and a negative one; the suite adds them if missing).
	BadTTLs []time.Duration

	// The fields below are optional.

	// Now reads the clock that every Locker from New uses for the times
	// it reports (Options.Clock of most backends): the fake clock that
	// Expire advances, or time.Now. With it the suite also checks those
	// times: Lease.ValidUntil is the send time of the request plus TTL,
	// and the expiry in a HeldError or in LockInfo of a held key lies
	// after the request and at most TTL after its answer. Default: nil,
	// the times are only checked for being set and ordered.
	Now func() time.Time
	// Contenders is the number of goroutines, each with its own Locker
	// from New, that race for one key in the one-winner cases. Default:
	// DefaultContenders.
	Contenders int
	// Restart restarts the store, or closes and reopens every connection
	// to it, keeping what it stored; Lockers from New before it may stop
	// working. The suite calls it in a case of its own, which runs before
	// its other cases start, and checks that tokens increase across it.
	// Default: nil, that case is skipped.
	Restart func(t *testing.T)
}

// DefaultContenders is the number of racing goroutines when
// Harness.Contenders is 0.
const DefaultContenders = 16

// MinKeyLen is the smallest MaxKeyLen the suite can run with: its unique
// keys need that much room.
const MinKeyLen = 64

func (h Harness) contenders() int {
	if h.Contenders > 0 {
		return h.Contenders
	}
	return DefaultContenders
}

// badTTLs returns h.BadTTLs plus 0 and a negative duration when missing.
func (h Harness) badTTLs() []time.Duration {
	ttls := append([]time.Duration(nil), h.BadTTLs...)
	var zero, negative bool
	for _, d := range ttls {
		zero = zero || d == 0
		negative = negative || d < 0
	}
	if !zero {
		ttls = append(ttls, 0)
	}
	if !negative {
		ttls = append(ttls, -time.Second)
	}
	return ttls
}
