package gcs

import (
	"fmt"
	"time"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
)

// Limits of the Cloud Storage locker.
const (
	// MaxObjectNameLen is the longest object name Cloud Storage accepts,
	// in bytes of UTF-8. A key may be as long as MaxObjectNameLen minus
	// the length of Options.Prefix.
	MaxObjectNameLen = 1024
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
	// DefaultMaxAttempts is the number of tries of one request when
	// Options.MaxAttempts is 0.
	DefaultMaxAttempts = 8
	// DefaultBackoff is the first wait after a throttled or failed
	// request when Options.Backoff is 0.
	DefaultBackoff = 250 * time.Millisecond
	// DefaultProbeInterval is how often a waited-for key is probed when
	// Options.ProbeInterval is 0 (see the package doc, "Waiting").
	DefaultProbeInterval = probe.DefaultInterval
	// maxBackoff caps the doubling waits between tries.
	maxBackoff = 8 * time.Second
)

// Options configure the Locker of New. A nil *Options means all defaults.
type Options struct {
	// Prefix is put before every key to name its object, for example
	// "locks/". It counts against MaxObjectNameLen and follows the same
	// rules as object names (valid UTF-8, no carriage return or line
	// feed). Default: "".
	Prefix string
	// Clock times leases and, in clock-free mode, how long a generation
	// has been seen unchanged; in trusted-clock mode its wall reading
	// also computes stored expiries. Waits between retries use real time.
	// Default: fence.SystemClock.
	Clock fence.Clock
	// TrustedClock selects trusted-clock expiry (see the package doc).
	// Default: false, clock-free expiry.
	TrustedClock bool
	// MaxClockSkew is how far apart the wall clocks of the machines using
	// the bucket may be, in trusted-clock mode only: an expired lease is
	// taken over this long after its stored expiry. 0 to an hour.
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
	// ProbeInterval is how often the object of a key that a Session.Lock
	// of this Locker waits for is probed, to wake the waiter when the
	// lease ends (see the package doc, "Waiting"): one metadata read per
	// waited-for key per interval. At least 10 ms; negative turns probes
	// off, and waiters poll at fence.SessionOptions.PollInterval.
	// Default: DefaultProbeInterval.
	ProbeInterval time.Duration
}

// store is the driver.Locker on one bucket: the reads and
// conditional writes of its objects, and what it saw of them.
type store struct {
	store  *objects
	scope  string // the bucket's name: the scope of its objects in obs
	prefix string
	clock  fence.Clock
	obs    *clockfree.Observations
	mode   clockfree.Mode
	probe  *probe.Prober // nil with probes off
}

var (
	_ driver.Locker = (*store)(nil)
	_ driver.Aser   = (*store)(nil)
)

// New returns a *fence.Locker that keeps its records in bucket (from
// storage.Client.Bucket). It checks the options but does not call Cloud
// Storage; the bucket must exist (see CreateBucket: the Locker's Create,
// which lacks a project, is unsupported). The Locker sets its own retry
// policy on each request (see Options.MaxAttempts), replacing the
// client's. Its As gives bucket (see the package doc).
func New(bucket *storage.BucketHandle, opts *Options) (*fence.Locker, error) {
	d, err := newStore(bucket, opts, nil)
	if err != nil {
		return nil, err
	}
	return driver.NewLocker(d, &driver.LockerOptions{Clock: d.clock})
}

// newStore checks the arguments of New and returns the store they make,
// remembering what it sees in obs (nil: observations of its own). The
// tests share one obs between the lockers of one process.
func newStore(bucket *storage.BucketHandle, opts *Options, obs *clockfree.Observations) (*store, error) {
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
	mode := clockfree.Mode{TrustedClock: o.TrustedClock, MaxClockSkew: o.MaxClockSkew}
	if err := mode.Check(); err != nil {
		return nil, err
	}
	switch {
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
	every, err := probe.Interval("ProbeInterval", o.ProbeInterval)
	if err != nil {
		return nil, err
	}
	if obs == nil {
		obs = clockfree.NewObservations()
	}
	d := &store{
		store:  &objects{bucket: bucket, attempts: o.MaxAttempts, backoff: backoff.Policy{First: o.Backoff, Max: maxBackoff}},
		scope:  bucket.BucketName(),
		prefix: o.Prefix,
		clock:  driver.ClockOrSystem(o.Clock),
		obs:    obs,
		mode:   mode,
	}
	if every > 0 {
		d.probe = probe.New(every, d.clock, d.probeRead)
	}
	return d, nil
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "gcs", MaxKeyLen: MaxObjectNameLen - len(d.prefix), MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL, ClockFree: !d.mode.TrustedClock, MinRenewInterval: MinRenewInterval}
}

// As implements driver.Aser: it gives the bucket given to New (or made by
// the URL opener) to a **storage.BucketHandle.
func (d *store) As(target any) bool {
	if p, ok := target.(**storage.BucketHandle); ok {
		*p = d.store.bucket
		return true
	}
	return false
}
