package etcd

import (
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Limits of the etcd locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes of UTF-8 (the
	// etcd key is longer by the prefix and "held/" or "last/").
	MaxKeyLen = 1024
	// MaxOwnerLen is the longest owner id accepted, in bytes.
	MaxOwnerLen = 1024
	// DefaultMinTTL is the shortest lease of a locker whose
	// Options.MinTTL is zero: the shortest lease an etcd server grants
	// with its default election timeout of 1 s. etcd raises every
	// lease to at least 1.5 election timeouts, rounded up to a second
	// (2 s by default; 1 s for a server started with
	// --election-timeout=666 or less).
	DefaultMinTTL = 2 * time.Second
	// MaxTTL is the longest lease.
	MaxTTL = 24 * time.Hour
	// DefaultPrefix is the prefix of the etcd keys of a locker whose
	// Options.Prefix is empty.
	DefaultPrefix = "fence/locks/"
)

// Options configure New. A nil *Options means all defaults.
type Options struct {
	// Prefix starts every etcd key the locker reads and writes (see the
	// package doc for the layout). Lockers share their leases when they
	// have the same prefix on the same cluster. Default: DefaultPrefix.
	Prefix string
	// Clock supplies the send times from which Lease.ValidUntil,
	// HeldError.ValidUntil and LockInfo.ValidUntil are computed, and on
	// which the portable layer refuses a Renew or Release of a lease
	// that ran out. Whether a key is held is decided by the etcd
	// leader, and by the Locker's deletes of the records nobody renewed
	// within their TTL, timed on the system's monotonic clock. Default:
	// fence.SystemClock.
	Clock fence.Clock
	// MinTTL is the shortest lease accepted, a whole number of seconds:
	// the shortest lease the server grants (see DefaultMinTTL) is a
	// safe choice. A Locker's shared etcd lease lasts the TTL and one
	// second (see the package doc); an Acquire whose shared lease the
	// server lengthens beyond that gets an error matching
	// fence.ErrInvalid. Default: DefaultMinTTL.
	MinTTL time.Duration
}

// New returns a *fence.Locker that keeps its leases in etcd through
// client, under the prefix of opts (see Options). It checks the options
// but does not contact the server. Close the client when done with the
// Locker; the Locker's Close does not.
func New(client *clientv3.Client, opts *Options) (*fence.Locker, error) {
	l, _, err := newLocker(client, opts, nil)
	return l, err
}

// newLocker is New, with the store under the Locker and the Locker's
// Close (the URL opener's, which closes its client).
func newLocker(client *clientv3.Client, opts *Options, closeClient func() error) (*fence.Locker, *store, error) {
	if client == nil {
		return nil, nil, &fence.InvalidError{Field: "client", Reason: "nil"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if strings.IndexByte(o.Prefix, 0) >= 0 {
		return nil, nil, &fence.InvalidError{Field: "Prefix", Reason: "holds a NUL byte"}
	}
	if o.MinTTL == 0 {
		o.MinTTL = DefaultMinTTL
	}
	if o.MinTTL < time.Second || o.MinTTL%time.Second != 0 || o.MinTTL > MaxTTL {
		return nil, nil, &fence.InvalidError{Field: "MinTTL", Reason: fmt.Sprintf("%v is not a whole number of seconds between 1s and %v", o.MinTTL, MaxTTL)}
	}
	clock := driver.ClockOrSystem(o.Clock)
	d := &store{c: client, clock: clock, prefix: o.Prefix, minTTL: o.MinTTL}
	d.shared.sweep = d.sweep
	l, err := driver.NewLocker(d, &driver.LockerOptions{Clock: clock, Close: closeClient})
	if err != nil {
		return nil, nil, err
	}
	return l, d, nil
}
