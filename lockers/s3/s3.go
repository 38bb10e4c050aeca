package s3

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/objlock"
	"github.com/fencekit/fence/internal/probe"
)

// backendName names the backend in errors ("fence/s3: acquire ...").
const backendName = "s3"

// Limits of the S3 locker.
const (
	// MaxObjectKeyLen is the longest object key S3 accepts, in bytes of
	// UTF-8. A key may be as long as MaxObjectKeyLen minus the length of
	// Options.Prefix.
	MaxObjectKeyLen = 1024
	// MaxOwnerLen is the longest owner id accepted, in bytes.
	MaxOwnerLen = 1024
	// MinTTL and MaxTTL bound the lease duration. S3 has no limit on the
	// write rate of one object that a renewal every MinTTL/3 would
	// reach. The record keeps the TTL in nanoseconds.
	MinTTL = time.Second
	MaxTTL = 24 * time.Hour
	// DefaultMaxAttempts is the number of tries of one request when
	// Options.MaxAttempts is 0.
	DefaultMaxAttempts = 8
	// DefaultBackoff is the first wait after a throttled or failed
	// request when Options.Backoff is 0.
	DefaultBackoff = 100 * time.Millisecond
	// DefaultProbeInterval is how often a waited-for key is probed when
	// Options.ProbeInterval is 0 (see the package doc, "Waiting").
	DefaultProbeInterval = probe.DefaultInterval
	// maxBackoff caps the doubling waits between tries.
	maxBackoff = 8 * time.Second
	// maxRaced bounds the retries of one Acquire that lost a race but
	// found the key free.
	maxRaced = 3
)

// Options configure the Locker of New. A nil *Options means all defaults.
type Options struct {
	// Prefix is put before every key to name its object, for example
	// "locks/". It counts against MaxObjectKeyLen and must be valid
	// UTF-8 without NUL. Default: "".
	Prefix string
	// MaxKeySegmentLen, when positive, is the longest part of an object
	// key (prefix and key) between slashes, in bytes. S3 has no such
	// limit (default 0: none), but MinIO keeps objects in a file system
	// and refuses keys with a segment longer than 255 bytes: set 255 for
	// MinIO. Keys are then at most MaxKeySegmentLen bytes less the part
	// of Prefix after its last slash, whatever slashes they hold; longer
	// ones are refused with fence.ErrInvalid.
	MaxKeySegmentLen int
	// Clock times leases and, in clock-free mode, how long an ETag has
	// been seen unchanged; in trusted-clock mode its wall reading also
	// computes stored expiries. Waits between retries use real time.
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
	// MaxAttempts is how many times one request is tried when S3
	// throttles it, fails (5xx) or the connection fails, while ctx lasts.
	// 1 means no retry. The client's own retries are off for the
	// Locker's requests. Default: DefaultMaxAttempts.
	MaxAttempts int
	// Backoff is the first wait before a retry; each further wait
	// doubles, up to 8 s, and is jittered between half and all of its
	// length. Default: DefaultBackoff.
	Backoff time.Duration
	// ProbeInterval is how often the object of a key that a Session.Lock
	// of this Locker waits for is probed, to wake the waiter when the
	// lease ends (see the package doc, "Waiting"): one HEAD request per
	// waited-for key per interval. At least 10 ms; negative turns probes
	// off, and waiters poll at fence.SessionOptions.PollInterval.
	// Default: DefaultProbeInterval.
	ProbeInterval time.Duration
}

// store is the driver.Locker on one bucket: objlock's Store over the
// bucket's objects, with the Info, As and Create of S3.
type store struct {
	*objlock.Store
	objects *objects
	prefix  string
	maxKey  int // the longest key: see maxKeyLen
}

var (
	_ driver.Locker          = (*store)(nil)
	_ driver.Aser            = (*store)(nil)
	_ driver.Creator         = (*store)(nil)
	_ driver.ReleaseNotifier = (*store)(nil)
)

// New returns a *fence.Locker that keeps its records in bucket through
// client. It checks the options but does not call S3. The client is used
// as it is, except that the Locker's requests go without the client's
// retries (see Options.MaxAttempts). The bucket must exist: the
// Locker's Create makes it. Its As gives client, to a **s3.Client.
func New(client *s3.Client, bucket string, opts *Options) (*fence.Locker, error) {
	d, err := newStore(client, bucket, opts, nil)
	if err != nil {
		return nil, err
	}
	return driver.NewLocker(d, &driver.LockerOptions{Clock: d.Clock()})
}

// newStore checks the arguments of New and returns the store they make,
// remembering what it sees in obs (nil: observations of its own). The
// tests share one obs between the lockers of one process.
func newStore(client *s3.Client, bucket string, opts *Options, obs *clockfree.Observations) (*store, error) {
	if client == nil {
		return nil, &fence.InvalidError{Field: "client", Reason: "nil"}
	}
	if why := badBucketName(bucket); why != "" {
		return nil, &fence.InvalidError{Field: "bucket", Reason: fmt.Sprintf("%q %s", bucket, why)}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := checkPrefix(o.Prefix); err != nil {
		return nil, err
	}
	if o.MaxKeySegmentLen < 0 {
		return nil, &fence.InvalidError{Field: "MaxKeySegmentLen", Reason: fmt.Sprintf("%d is negative", o.MaxKeySegmentLen)}
	}
	maxKey, err := maxKeyLen(o.Prefix, o.MaxKeySegmentLen)
	if err != nil {
		return nil, err
	}
	d := &store{objects: &objects{client: client, bucket: bucket}, prefix: o.Prefix, maxKey: maxKey}
	s, err := objlock.New(objlock.Config{
		Bucket:     d.objects,
		Scope:      bucket,
		ObjectName: d.objectKey,
		// S3 refuses some concurrent conditional writes with 409, all of
		// them, so that none lands.
		RetryFreeRaces:     maxRaced,
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
	return driver.Info{Name: backendName, MaxKeyLen: d.maxKey, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL, ClockFree: !d.Mode().TrustedClock}
}

// As implements driver.Aser: it gives the client given to New (or made by
// the URL opener) to a **s3.Client.
func (d *store) As(target any) bool {
	if p, ok := target.(**s3.Client); ok {
		*p = d.objects.client
		return true
	}
	return false
}

// Create implements driver.Creator: it creates the bucket (see
// createBucket).
func (d *store) Create(ctx context.Context) error {
	return d.objects.createBucket(ctx)
}
