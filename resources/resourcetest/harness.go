// Package resourcetest is the conformance suite every fenced resource
// passes in its portable form, fence.Resource. A backend's test is a small
// Harness and one call to Run; third-party backends can import it the same
// way.
package resourcetest

import (
	"testing"

	"github.com/fencekit/fence"
)

// Harness tells the suite how to drive one backend.
type Harness struct {
	// New returns a Resource on the backend's store. It may be called many
	// times in one run, also concurrently; resources from one Harness share
	// the store (the suite makes its names unique per case).
	New func(t *testing.T) fence.Resource
	// MaxNameLen is the longest name the backend accepts, in bytes.
	MaxNameLen int
}
