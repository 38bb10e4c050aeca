package gcs

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
)

// Defaults of Options.
const (
	// DefaultConflictBackoff is the first pause before re-reading an
	// object after a 412 (another writer changed it).
	DefaultConflictBackoff = 10 * time.Millisecond
	// DefaultRateLimitBackoff is the first pause after a 408, 429 or 5xx
	// answer: Cloud Storage accepts about one write per second per object.
	DefaultRateLimitBackoff = time.Second
	// DefaultMaxBackoff caps the doubling pauses.
	DefaultMaxBackoff = 30 * time.Second
)

// Options configure a Resource. The zero value gives the defaults.
type Options struct {
	// ConflictBackoff is the first pause after a 412 answer; pauses
	// double and are jittered (a random duration between half and all of
	// the pause). Default: DefaultConflictBackoff.
	ConflictBackoff time.Duration
	// RateLimitBackoff is the first pause after a 408, 429 or 5xx answer
	// or a failed connection. Default: DefaultRateLimitBackoff.
	RateLimitBackoff time.Duration
	// MaxBackoff caps every pause. Default: DefaultMaxBackoff.
	MaxBackoff time.Duration
	// MaxAttempts bounds the write attempts of one call; 0 means no bound
	// other than the caller's ctx. Default: 0.
	MaxAttempts int
}

// Resource fences the objects of one bucket. It implements fence.Resource
// (Put, Get, Delete, Highest, with byte-slice values) and offers a native
// API with streaming bodies (Upload, Open, Stat). It is safe for concurrent
// use. Create it with New.
type Resource struct {
	bucket *storage.BucketHandle
	opts   Options
	// unconditional drops the generation precondition from writes: a
	// check followed by a blind write, the bug fencing exists to prevent.
	// Only the control runs of the tests set it, to show that their
	// checker catches what the precondition prevents.
	unconditional bool
}

var _ fence.Resource = (*Resource)(nil)

// New returns a Resource on bucket. The SDK exposes concrete handles, not
// interfaces, so New takes the bucket handle itself; the package calls
// only Object, and on the object handle Attrs, NewReader and NewWriter.
// opts may be nil. Negative durations or attempts, or a MaxBackoff below
// one of the first pauses, get an error matching fence.ErrInvalid.
func New(bucket *storage.BucketHandle, opts *Options) (*Resource, error) {
	if bucket == nil {
		return nil, &fence.InvalidError{Field: "bucket", Reason: "nil bucket handle"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	for _, d := range []struct {
		field string
		v     *time.Duration
		def   time.Duration
	}{
		{"ConflictBackoff", &o.ConflictBackoff, DefaultConflictBackoff},
		{"RateLimitBackoff", &o.RateLimitBackoff, DefaultRateLimitBackoff},
		{"MaxBackoff", &o.MaxBackoff, DefaultMaxBackoff},
	} {
		if *d.v < 0 {
			return nil, &fence.InvalidError{Field: d.field, Reason: fmt.Sprintf("%v is negative", *d.v)}
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if o.MaxBackoff < o.ConflictBackoff || o.MaxBackoff < o.RateLimitBackoff {
		return nil, &fence.InvalidError{Field: "MaxBackoff", Reason: fmt.Sprintf("%v is below a first pause (%v, %v)", o.MaxBackoff, o.ConflictBackoff, o.RateLimitBackoff)}
	}
	if o.MaxAttempts < 0 {
		return nil, &fence.InvalidError{Field: "MaxAttempts", Reason: fmt.Sprintf("%d is negative", o.MaxAttempts)}
	}
	return &Resource{bucket: bucket, opts: o}, nil
}

// checkWrite validates a write's name and token and the context.
func checkWrite(ctx context.Context, name string, token fence.Token) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if err := fence.ValidateToken(token); err != nil {
		return err
	}
	return ctx.Err()
}
