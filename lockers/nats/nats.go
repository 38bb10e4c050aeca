package nats

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
)

// Limits of the NATS locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes of UTF-8. Its KV key
	// is up to three times longer (see the package doc, "Keys"), and
	// stays within the server's default control line of 4 KB.
	MaxKeyLen = 1024
	// MaxOwnerLen is the longest owner id accepted, in bytes.
	MaxOwnerLen = 1024
	// MinTTL and MaxTTL bound the lease duration. Below a second, a
	// synced write's latency and a failover would eat much of a
	// clock-free lease.
	MinTTL = time.Second
	MaxTTL = 24 * time.Hour
	// MaxReplicas is the most replicas JetStream keeps of a stream.
	MaxReplicas = 5
)

// Options configure the Locker of New. A nil *Options means all defaults.
type Options struct {
	// Clock times leases and how long an entry's revision has been seen
	// unchanged. Default: fence.SystemClock.
	Clock fence.Clock
	// Replicas is the number of servers that keep the bucket, for the
	// Locker's Create (and CreateBucket): 1 to MaxReplicas; 3 or 5 in a
	// cluster, so that the bucket survives the loss of a server. Default:
	// 1.
	Replicas int
}

// store is the driver.Locker on one KV bucket.
type store struct {
	js       jetstream.JetStream
	bucket   string
	replicas int
	clock    fence.Clock
	obs      *clockfree.Observations

	mu sync.Mutex
	kv jetstream.KeyValue // nil until bound
}

var (
	_ driver.Locker          = (*store)(nil)
	_ driver.Creator         = (*store)(nil)
	_ driver.Aser            = (*store)(nil)
	_ driver.Publisher       = (*store)(nil)
	_ driver.ReleaseNotifier = (*store)(nil)
)

// bucketName is JetStream's rule for KV bucket names, with a length this
// package bounds (the name is part of every request's subject).
var bucketName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// New returns a *fence.Locker on KV bucket through js. It checks its
// arguments but does not contact the server; the first call binds the
// bucket, which must exist: create it with the Locker's Create,
// CreateBucket, or the nats command (see the package doc, "The bucket").
// Its As gives js to a *jetstream.JetStream.
func New(js jetstream.JetStream, bucket string, opts *Options) (*fence.Locker, error) {
	d, err := newStore(js, bucket, opts, nil)
	if err != nil {
		return nil, err
	}
	return driverLocker(d)
}

// newStore checks the arguments of New and returns the store they make,
// remembering what it sees in obs (nil: observations of its own). The
// tests share one obs between the lockers of one process.
func newStore(js jetstream.JetStream, bucket string, opts *Options, obs *clockfree.Observations) (*store, error) {
	if js == nil {
		return nil, &fence.InvalidError{Field: "js", Reason: "nil"}
	}
	if err := checkBucket(bucket); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if err := checkReplicas(o.Replicas); err != nil {
		return nil, err
	}
	if obs == nil {
		obs = clockfree.NewObservations()
	}
	return &store{js: js, bucket: bucket, replicas: o.Replicas, clock: driver.ClockOrSystem(o.Clock), obs: obs}, nil
}

func checkBucket(bucket string) error {
	if !bucketName.MatchString(bucket) {
		return &fence.InvalidError{Field: "bucket", Reason: fmt.Sprintf("%q is not a KV bucket name (1 to 64 of a-z, A-Z, 0-9, '_', '-')", bucket)}
	}
	return nil
}

func checkReplicas(n int) error {
	if n < 1 || n > MaxReplicas {
		return &fence.InvalidError{Field: "Replicas", Reason: fmt.Sprintf("%d is outside the range 1 to %d", n, MaxReplicas)}
	}
	return nil
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "nats", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL, ClockFree: true}
}

// As implements driver.Aser: it gives the JetStream context to a
// *jetstream.JetStream, and its connection to a **nats.Conn.
func (d *store) As(target any) bool {
	switch p := target.(type) {
	case *jetstream.JetStream:
		*p = d.js
		return true
	case **natsgo.Conn:
		*p = d.js.Conn()
		return *p != nil
	}
	return false
}

// Create implements driver.Creator: it creates the bucket as CreateBucket
// does, with the Locker's Options.Replicas.
func (d *store) Create(ctx context.Context) error {
	return createBucket(ctx, d.js, d.bucket, d.replicas)
}

// CreateBucket creates KV bucket for a Locker through js, with replicas
// copies (1 to MaxReplicas), kept in files, one revision per key, no
// TTL: what the package doc ("The bucket") describes. A bucket that
// exists already is left as it is, whatever its settings; replicas
// starting together may all call it at once.
func CreateBucket(ctx context.Context, js jetstream.JetStream, bucket string, replicas int) error {
	switch {
	case js == nil:
		return &fence.InvalidError{Field: "js", Reason: "nil"}
	case checkBucket(bucket) != nil:
		return checkBucket(bucket)
	case checkReplicas(replicas) != nil:
		return checkReplicas(replicas)
	}
	return createBucket(ctx, js, bucket, replicas)
}

func createBucket(ctx context.Context, js jetstream.JetStream, bucket string, replicas int) error {
	if _, err := js.KeyValue(ctx, bucket); err == nil {
		return nil
	}
	_, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      bucket,
		Description: "fence locks",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
	})
	if err != nil && !errors.Is(err, jetstream.ErrBucketExists) {
		return fmt.Errorf("create bucket %q: %w", bucket, err)
	}
	return nil
}

// bind returns the bucket's KeyValue, binding it on first use. A bucket
// that does not exist gets an error matching fence.ErrStoreMissing; one
// whose entries expire (a bucket TTL) is refused with fence.ErrInvalid,
// since the server would delete held records.
func (d *store) bind(ctx context.Context) (jetstream.KeyValue, error) {
	d.mu.Lock()
	kv := d.kv
	d.mu.Unlock()
	if kv != nil {
		return kv, nil
	}
	kv, err := d.js.KeyValue(ctx, d.bucket)
	if err != nil {
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			return nil, driver.StoreMissing(fmt.Errorf("bucket %q: %w", d.bucket, err))
		}
		return nil, fmt.Errorf("bind bucket %q: %w", d.bucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("bind bucket %q: %w", d.bucket, err)
	}
	if st.TTL() > 0 {
		return nil, &fence.InvalidError{Field: "bucket", Reason: fmt.Sprintf("%q has a TTL of %v: the server would delete held locks; use a bucket without one", d.bucket, st.TTL())}
	}
	d.mu.Lock()
	d.kv = kv
	d.mu.Unlock()
	return kv, nil
}

// unbind forgets the bound bucket, after a call found it gone.
func (d *store) unbind() {
	d.mu.Lock()
	d.kv = nil
	d.mu.Unlock()
}

// driverLocker returns the portable Locker over d.
func driverLocker(d *store) (*fence.Locker, error) {
	return driver.NewLocker(d, &driver.LockerOptions{Clock: d.clock})
}
