package redis

import (
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/redisscript"
)

// Limits of the Redis locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes.
	MaxKeyLen = 1024
	// MaxOwnerLen is the longest owner id accepted, in bytes.
	MaxOwnerLen = 1024
	// MinTTL and MaxTTL bound the lease duration. MinTTL is the shortest lease a client can keep
	// over a network: a fence.Session renews every TTL/3 and bounds each call
	// by TTL/3, so at 100 ms a round trip to the server, with on a cold pool
	// a new connection, has about 33 ms; the 1 ms leases the server would
	// take run out before the first call returns. Redis counts
	// expiries in milliseconds; a TTL is rounded up to a whole millisecond
	// there, so the server's lease is never shorter than the caller's.
	MinTTL = 100 * time.Millisecond
	MaxTTL = 24 * time.Hour
	// DefaultPrefix starts every key the locker writes when
	// Options.Prefix is empty.
	DefaultPrefix = "fence:"
	// DefaultWaitTimeout is how long WAIT waits for replicas when
	// Options.MinReplicas is set and Options.WaitTimeout is not.
	DefaultWaitTimeout = time.Second
)

// Options configure the Locker of New. A nil *Options means all defaults.
type Options struct {
	// Prefix starts the name of every key and of the release channel the
	// locker uses (see the package doc, "Records"). Lockers that share a
	// prefix share their locks. It may not contain '{' or '}', which
	// would move the hash tag. Default: DefaultPrefix.
	Prefix string
	// Clock supplies the send times from which Lease.ValidUntil and the
	// expiries in HeldError and LockInfo are computed. Whether a key is
	// held is decided by the server. Default: fence.SystemClock.
	Clock fence.Clock
	// MinReplicas, when above 0, makes Acquire, Renew and Break wait
	// after their write, on the same connection, with WAIT MinReplicas
	// WaitTimeout, and fail with a *ReplicationError when fewer replicas
	// acknowledged it (see the package doc, "Failover"). An Acquire that
	// fails so hands out no token and frees the key again. It needs a
	// client that sends one key's commands to one server: a *goredis.Client
	// (also from NewFailoverClient) or a *goredis.ClusterClient. Default:
	// 0, no WAIT.
	MinReplicas int
	// WaitTimeout bounds the WAIT of MinReplicas. Default:
	// DefaultWaitTimeout. It must be at least a millisecond: WAIT with 0
	// waits forever.
	WaitTimeout time.Duration
}

// New returns a *fence.Locker that keeps its leases in Redis through
// client, under the keys opts.Prefix names. It checks the options but does
// not contact the server. The Locker's Close ends its subscription to
// release notifications, if it has one (see the package doc, "Release
// notifications"); waiters in Session.Lock then go on by polling. It does
// not close the client. Its As gives the client (see the package doc).
func New(client goredis.UniversalClient, opts *Options) (*fence.Locker, error) {
	d, err := newStore(client, opts)
	if err != nil {
		return nil, err
	}
	return d.locker(func() error { d.subs.close(); return nil })
}

// newStore checks the arguments of New and returns the store they make.
func newStore(client goredis.UniversalClient, opts *Options) (*store, error) {
	if client == nil {
		return nil, &fence.InvalidError{Field: "client", Reason: "nil"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := checkOptions(&o); err != nil {
		return nil, err
	}
	if o.MinReplicas > 0 {
		switch client.(type) {
		case *goredis.Client, *goredis.ClusterClient:
		default:
			return nil, &fence.InvalidError{Field: "MinReplicas", Reason: fmt.Sprintf("WAIT needs a *redis.Client or *redis.ClusterClient, which send a key's commands to one server; not a %T", client)}
		}
	}
	d := &store{c: client, clock: driver.ClockOrSystem(o.Clock), prefix: o.Prefix, channel: o.Prefix + "released", minReplicas: o.MinReplicas, waitTimeout: o.WaitTimeout}
	d.subs = newSubscriber(client, d.channel)
	return d, nil
}

// locker returns the *fence.Locker over d, whose Close calls closeFn.
func (d *store) locker(closeFn func() error) (*fence.Locker, error) {
	return driver.NewLocker(d, &driver.LockerOptions{Clock: d.clock, Close: closeFn})
}

// checkOptions checks o and sets its defaults.
func checkOptions(o *Options) error {
	p, err := redisscript.Prefix(o.Prefix, DefaultPrefix)
	if err != nil {
		return err
	}
	o.Prefix = p
	switch {
	case o.MinReplicas < 0:
		return &fence.InvalidError{Field: "MinReplicas", Reason: fmt.Sprintf("%d is negative", o.MinReplicas)}
	case o.WaitTimeout < 0 || (o.WaitTimeout > 0 && o.WaitTimeout < time.Millisecond):
		return &fence.InvalidError{Field: "WaitTimeout", Reason: fmt.Sprintf("%v is not 0 (the default) or at least 1ms", o.WaitTimeout)}
	}
	if o.WaitTimeout == 0 {
		o.WaitTimeout = DefaultWaitTimeout
	}
	return nil
}
