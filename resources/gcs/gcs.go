package gcs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// backendName names the backend in errors ("fence/gcs: put ...").
const backendName = "gcs"

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

// Options configure New. The zero value gives the defaults.
type Options struct {
	// Prefix is put before every key to name its object, for example
	// "reports/" (a key "acme.csv" is then the object
	// "reports/acme.csv"). Errors name the key, without the prefix. At
	// most MaxKeyLen-1 bytes of UTF-8, without NUL, carriage return or
	// line feed. Default: none.
	Prefix string
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

// bucket is the driver under the *fence.Resource of New: the conditional
// uploads and reads of one bucket. Upload and NewReader reach it through
// bucketOf.
type bucket struct {
	handle *storage.BucketHandle
	prefix string
	opts   Options
	// seen is set once the bucket is known to exist: Cloud Storage
	// answers 404 to a missing object and a missing bucket alike, so until
	// then a missing object is checked (see absent).
	seen atomic.Bool
	// unconditional drops the generation precondition from writes: a
	// check followed by a blind write, the bug fencing exists to prevent.
	// Only the control runs of the tests set it, to show that their
	// checker catches what the precondition prevents.
	unconditional bool
}

var (
	_ driver.Resource = (*bucket)(nil)
	_ driver.Aser     = (*bucket)(nil)
)

// New returns a resource on bucket, safe for concurrent use. Its methods
// (Put, Get, Delete, Highest, Claim) take byte-slice values; Upload and
// NewReader take it for streaming bodies and the object's attributes. The
// SDK exposes concrete handles, not interfaces, so New takes the bucket
// handle itself; the package calls Object and Attrs on it, and on the
// object handle Attrs, NewReader and NewWriter. The bucket must exist
// (the Create of a resource opened by URL makes it); a missing one gets
// an error matching fence.ErrStoreMissing. opts may be nil. A bad Prefix,
// negative durations or attempts, or a MaxBackoff below one of the first
// pauses get an error matching fence.ErrInvalid.
func New(handle *storage.BucketHandle, opts *Options) (*fence.Resource, error) {
	return newResource(handle, opts, nil)
}

// newResource is New, with the options of driver.NewResource.
func newResource(handle *storage.BucketHandle, opts *Options, ropts *driver.ResourceOptions) (*fence.Resource, error) {
	if handle == nil {
		return nil, &fence.InvalidError{Field: "bucket", Reason: "nil bucket handle"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case len(o.Prefix) >= MaxKeyLen:
		return nil, &fence.InvalidError{Field: "Prefix", Reason: fmt.Sprintf("%d bytes leaves no room for a key in an object name of at most %d", len(o.Prefix), MaxKeyLen)}
	case !utf8.ValidString(o.Prefix) || strings.ContainsAny(o.Prefix, "\x00\r\n"):
		return nil, &fence.InvalidError{Field: "Prefix", Reason: "not valid UTF-8, or holding a NUL, carriage return or line feed"}
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
	return driver.NewResource(&bucket{handle: handle, prefix: o.Prefix, opts: o}, ropts)
}

// bucketOf returns the bucket under r, or a *fence.InvalidError when r is
// nil or not a resource of New.
func bucketOf(r *fence.Resource) (*bucket, error) {
	if r == nil {
		return nil, &fence.InvalidError{Field: "resource", Reason: "nil"}
	}
	b, ok := driver.ResourceOf(r).(*bucket)
	if !ok {
		return nil, &fence.InvalidError{Field: "resource", Reason: fmt.Sprintf("a %s resource, not one of gcs.New", r.Name())}
	}
	return b, nil
}

// As implements driver.Aser: a **storage.BucketHandle target gets the
// bucket handle New was given.
func (b *bucket) As(target any) bool {
	if p, ok := target.(**storage.BucketHandle); ok {
		*p = b.handle
		return true
	}
	return false
}

// ResourceInfo implements driver.Resource.
func (b *bucket) ResourceInfo() driver.ResourceInfo {
	return driver.ResourceInfo{Name: backendName, MaxKeyLen: MaxKeyLen - len(b.prefix)}
}

// native returns the bucket under r after checking the input of Upload
// or NewReader as the *fence.Resource checks that of its methods: the
// resource, the key, a write's token (token nil for a read), ctx.
func native(ctx context.Context, r *fence.Resource, key string, token *fence.Token) (*bucket, error) {
	b, err := bucketOf(r)
	if err == nil {
		err = driver.ValidateKey("key", key, MaxKeyLen-len(b.prefix))
	}
	if err == nil && token != nil {
		err = driver.ValidateToken(*token)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// fail wraps an error of Upload or NewReader as the *fence.Resource wraps
// those of its methods.
func fail(ctx context.Context, op, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w (%w)", err, cerr)
	}
	return &fence.OpError{Backend: backendName, Op: op, Key: key, Err: err}
}
