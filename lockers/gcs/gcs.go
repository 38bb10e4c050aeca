package gcs

import (
	"fmt"
	"time"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/leases"
)

// Limits of the Cloud Storage locker.
const (
	// MaxKeyLen is the longest object name Cloud Storage accepts, in
	// bytes of UTF-8; a key may be as long as MaxKeyLen minus the length
	// of Options.Prefix (see Locker.MaxKeyLen).
	MaxKeyLen = 1024
	// MaxOwnerLen is the longest owner id accepted, in bytes.
	MaxOwnerLen = 1024
	// MinRenewInterval is the shortest useful interval between two writes
	// to one object: Cloud Storage throttles faster writes to one name.
	MinRenewInterval = time.Second
	// MinTTL and MaxTTL bound the lease duration. MinTTL leaves room for
	// renewals every TTL/3 at MinRenewInterval. The record keeps the TTL
	// in nanoseconds.
	MinTTL = 3 * MinRenewInterval
	MaxTTL = 24 * time.Hour
	// MaxClockSkew bounds Options.MaxClockSkew.
	MaxClockSkew = time.Hour
	// DefaultMaxAttempts is the number of tries of one request when
	// Options.MaxAttempts is 0.
	DefaultMaxAttempts = 8
	// DefaultBackoff is the first wait after a throttled or failed
	// request when Options.Backoff is 0.
	DefaultBackoff = 250 * time.Millisecond
	// maxBackoff caps the doubling waits between tries.
	maxBackoff = 8 * time.Second
)

// Options configure a Locker. A nil *Options means all defaults.
type Options struct {
	// Prefix is put before every key to name its object, for example
	// "locks/". It counts against MaxKeyLen and follows the same rules
	// as object names (valid UTF-8, no carriage return or line feed).
	// Default: "".
	Prefix string
	// Clock times leases and, in clock-free mode, how long a generation
	// has been seen unchanged; in trusted-clock mode its wall reading
	// also computes stored expiries. Waits between retries use real time.
	// Default: fence.SystemClock.
	Clock fence.Clock
	// Observations is where a Locker remembers the generations it saw
	// and wrote. Lockers of one process should share one, so that what
	// one saw counts for all; they must then share a Clock too. Default:
	// a new Observations for this Locker alone.
	Observations *Observations
	// TrustedClock selects trusted-clock expiry (see the package doc).
	// Default: false, clock-free expiry.
	TrustedClock bool
	// MaxClockSkew is how far apart the wall clocks of the machines using
	// the bucket may be, in trusted-clock mode only: an expired lease is
	// taken over this long after its stored expiry. 0 to MaxClockSkew.
	// Default: 0.
	MaxClockSkew time.Duration
	// MaxAttempts is how many times one request is tried when Cloud
	// Storage throttles it (429), fails transiently (5xx) or the
	// connection fails, while ctx lasts. 1 means no retry. Default:
	// DefaultMaxAttempts.
	MaxAttempts int
	// Backoff is the first wait before a retry; each further wait
	// doubles, up to 8 s, and is jittered between half and all of its
	// length. Default: DefaultBackoff.
	Backoff time.Duration
}

// Locker is a fence.Locker on the objects of one Cloud Storage bucket.
// Create it with New; it is safe for concurrent use.
type Locker struct {
	store   *objects
	prefix  string
	clock   fence.Clock
	obs     *Observations
	trusted bool
	skew    time.Duration
	book    leases.Book // latest ValidUntil of the leases l renewed
}

var _ fence.Locker = (*Locker)(nil)

// New returns a Locker that keeps its records in bucket (from
// storage.Client.Bucket). It checks the options but does not call Cloud
// Storage; the bucket must exist (see CreateBucket). The Locker sets its
// own retry policy on each request (see Options.MaxAttempts), replacing the
// client's.
func New(bucket *storage.BucketHandle, opts *Options) (*Locker, error) {
	if bucket == nil {
		return nil, &fence.InvalidError{Field: "bucket", Reason: "nil"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := checkPrefix(o.Prefix); err != nil {
		return nil, err
	}
	switch {
	case o.MaxClockSkew < 0 || o.MaxClockSkew > MaxClockSkew:
		return nil, &fence.InvalidError{Field: "MaxClockSkew", Reason: fmt.Sprintf("%v is outside the range 0 to %v", o.MaxClockSkew, MaxClockSkew)}
	case o.MaxClockSkew != 0 && !o.TrustedClock:
		return nil, &fence.InvalidError{Field: "MaxClockSkew", Reason: "set without TrustedClock; clock-free expiry ignores wall clocks"}
	case o.MaxAttempts < 0:
		return nil, &fence.InvalidError{Field: "MaxAttempts", Reason: fmt.Sprintf("%d is negative", o.MaxAttempts)}
	case o.Backoff < 0 || o.Backoff > maxBackoff:
		return nil, &fence.InvalidError{Field: "Backoff", Reason: fmt.Sprintf("%v is outside the range 0 to %v", o.Backoff, maxBackoff)}
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Backoff == 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Observations == nil {
		o.Observations = NewObservations()
	}
	return &Locker{
		store:   &objects{bucket: bucket, attempts: o.MaxAttempts, backoff: o.Backoff},
		prefix:  o.Prefix,
		clock:   fence.ClockOrSystem(o.Clock),
		obs:     o.Observations,
		trusted: o.TrustedClock,
		skew:    o.MaxClockSkew,
	}, nil
}

// MaxKeyLen returns the longest key l accepts, in bytes: MaxKeyLen minus
// the length of its prefix.
func (l *Locker) MaxKeyLen() int { return MaxKeyLen - len(l.prefix) }

// ObjectName returns the name of the object that holds key's record.
func (l *Locker) ObjectName(key string) string { return l.prefix + key }
