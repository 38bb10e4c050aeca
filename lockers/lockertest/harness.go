// Package lockertest is the conformance suite every fence.Locker passes. A
// backend's test is a small Harness and one call to Run; third-party
// backends can import it the same way.
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
	New func(t *testing.T) fence.Locker
	// TTL is a lease duration that does not run out during a case.
	TTL time.Duration
	// ShortTTL is the lease duration of leases the suite lets expire.
	ShortTTL time.Duration
	// Expire returns once every lease of ShortTTL taken so far has expired
	// for every Locker from New: it advances a fake clock, or sleeps.
	Expire func(t *testing.T)
	// MaxKeyLen is the longest key the backend accepts, in bytes.
	MaxKeyLen int
	// BadTTLs are durations the backend must refuse with fence.ErrInvalid
	// (at least 0 and a negative one; the suite adds them if missing).
	BadTTLs []time.Duration
}
