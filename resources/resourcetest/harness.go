// Package resourcetest is the conformance suite every fenced resource
// passes in its portable form, *fence.Resource. A backend's test is a small
// Harness and one call to Run; third-party backends can import it the same
// way. A backend is a driver.Resource; its Harness.New returns
// driver.NewResource over it (or the backend's constructor, which does
// that), so the suite certifies the driver together with the portable
// layer every user gets.
//
// The package also holds History, a recorder and checker of concurrent
// writes that fault-injection tests reuse: it fails when a resource accepted
// a token lower than one it had accepted before.
package resourcetest

import (
	"math"
	"testing"

	"github.com/fencekit/fence"
)

// Harness tells the suite how to drive one backend.
type Harness struct {
	// New returns a Resource on the backend's store. It may be called many
	// times in one run, also concurrently; resources from one Harness share
	// the store (the suite makes its keys unique per case).
	New func(t *testing.T) *fence.Resource
	// MaxKeyLen is the longest key the backend accepts, in bytes.
	MaxKeyLen int

	// The fields below are optional.

	// MaxValueLen is the largest value the backend stores, in bytes. The
	// suite's large value is DefaultLargeValueLen bytes, or MaxValueLen
	// when that is smaller. Default: no limit below DefaultLargeValueLen.
	MaxValueLen int
	// Writers is the number of concurrent writers in the concurrency case,
	// each with its own Resource from New. Default: 8.
	Writers int
	// WritesPerWriter is the number of writes each of them attempts.
	// Default: 25. Lower both for stores that rate-limit writes to one
	// object.
	WritesPerWriter int
	// MaxToken is the largest token the backend can store. Tokens above it
	// must be refused with an error matching fence.ErrInvalid and change
	// nothing. Default: math.MaxUint64 (every token). SQL backends that
	// keep tokens in a signed BIGINT set math.MaxInt64; lockers issue
	// tokens counting up from 1, so no real token comes near it.
	MaxToken fence.Token
	// LostAnswer returns a Resource on the store New uses whose first
	// write (a Put or a Delete) the store applies but whose answer never
	// reaches the Resource, as when a connection drops after the request
	// was sent: a transport that lets the request through and drops the
	// response, a proxy that cuts the connection once the server has
	// answered a COMMIT. It talks to the real store, never to a mock of
	// it. The harness calls after exactly once, after the store applied
	// the write and before the Resource learns that the answer is lost;
	// the suite lands a higher token there through a Resource from New to
	// test the write that cannot be settled. Later calls pass untouched.
	// Default: nil, and the lost-answer cases are skipped.
	LostAnswer func(t *testing.T, after func()) *fence.Resource
	// NoLostAnswer says why the backend has no LostAnswer (for example,
	// an in-process store has no answer to lose); the lost-answer cases
	// skip with it.
	NoLostAnswer string
}

// DefaultLargeValueLen is the size of the suite's large value, in bytes.
const DefaultLargeValueLen = 300_000

// MinNameLen is the smallest MaxKeyLen the suite can run with: its unique
// names need that much room.
const MinNameLen = 64

func (h Harness) largeValueLen() int {
	if h.MaxValueLen > 0 && h.MaxValueLen < DefaultLargeValueLen {
		return h.MaxValueLen
	}
	return DefaultLargeValueLen
}

func (h Harness) maxToken() fence.Token {
	if h.MaxToken > 0 {
		return h.MaxToken
	}
	return math.MaxUint64
}

func (h Harness) writers() int {
	if h.Writers > 0 {
		return h.Writers
	}
	return 8
}

func (h Harness) writesPerWriter() int {
	if h.WritesPerWriter > 0 {
		return h.WritesPerWriter
	}
	return 25
}
