package gcs

import (
	"time"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/objlock"
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

// store is the driver.Locker on one bucket: objlock's Store over the
// bucket's objects, with the Info and As of Cloud Storage.
type store struct {
	*objlock.Store
	objects *objects
	prefix  string
}

var (
	_ driver.Locker          = (*store)(nil)
	_ driver.Aser            = (*store)(nil)
	_ driver.ReleaseNotifier = (*store)(nil)
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
	return driver.NewLocker(d, &driver.LockerOptions{Clock: d.Clock()})
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
	d := &store{objects: &objects{bucket: bucket}, prefix: o.Prefix}
	s, err := objlock.New(objlock.Config{
		Bucket:             d.objects,
		Scope:              bucket.BucketName(),
		ObjectName:         d.objectName,
		OrderedVersions:    true,
		Obs:                obs,
		Clock:              o.Clock,
		TrustedClock:       o.TrustedClock,
		MaxClockSkew:       o.MaxClockSkew,
		MaxAttempts:        o.MaxAttempts,
		DefaultMaxAttempts: DefaultMaxAttempts,
		Backoff:            o.Backoff,
		DefaultBackoff:     DefaultBackoff,
		MaxBackoff:         maxBackoff,
		ProbeInterval:      o.ProbeInterval,
	})
	if err != nil {
		return nil, err
	}
	d.Store = s
	return d, nil
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "gcs", MaxKeyLen: MaxObjectNameLen - len(d.prefix), MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL, ClockFree: !d.Mode().TrustedClock, MinRenewInterval: MinRenewInterval}
}

// As implements driver.Aser: it gives the bucket given to New (or made by
// the URL opener) to a **storage.BucketHandle.
func (d *store) As(target any) bool {
	if p, ok := target.(**storage.BucketHandle); ok {
		*p = d.objects.bucket
		return true
	}
	return false
}
