package objlock

import "context"

// Bucket is what a backend does with the objects of one bucket, one
// request per call, without retries: the Store retries and reconciles.
type Bucket interface {
	// Read reads object name: its content (at most MaxRecordLen+1 bytes
	// are needed), its version, and whether it exists. A missing bucket
	// is an error matching fence.ErrStoreMissing, never "not found".
	Read(ctx context.Context, name string) (data []byte, version string, found bool, err error)
	// Write writes data as object name on the condition that its version
	// is ifVersion, or that it does not exist when ifVersion is "", and
	// returns the new version. A write refused because the object is not
	// (or no longer) ifVersion returns an error matching ErrConflict.
	Write(ctx context.Context, name, ifVersion string, data []byte) (version string, err error)
	// Probe asks whether object name is still version prev (not ""),
	// without reading its content where the store allows.
	Probe(ctx context.Context, name, prev string) (Change, error)
	// Classify tells what a failed Read or Write may be followed by.
	Classify(err error) Outcome
}

// Change is the answer of a probe.
type Change int

const (
	Same    Change = iota // the object is still the version asked about
	Changed               // another version replaced it
	Gone                  // it no longer exists
)

// Outcome classifies the error of a failed request.
type Outcome int

const (
	Fatal     Outcome = iota // a definite refusal: return it
	Throttled                // refused for now (429): try again later
	Unknown                  // 408, 5xx, a connection failure: it may have been applied
)
