package redlock

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Client is what the locker needs of a connection to one master: running
// scripts, and subscribing for release notifications. *goredis.Client
// has it, and so has every goredis.UniversalClient; give each master a
// client of its own (a Client for a Redis Cluster, a Ring or a Sentinel
// group is one master to Redlock, not several).
type Client interface {
	goredis.Scripter
	Subscribe(ctx context.Context, channels ...string) *goredis.PubSub
}

// Limits of the locker.
const (
	// MaxKeyLen is the longest key, in bytes.
	MaxKeyLen = 1024
	// MaxOwnerLen is the longest owner id, in bytes.
	MaxOwnerLen = 256
	// MinTTL is the shortest lease: it must outlast one round to the
	// masters and the drift, and a fence.Session renews every TTL/3 with
	// each call bounded by TTL/3, so at 100 ms a round to every master,
	// with on a cold client new connections, has about 33 ms; Redis would
	// take leases of 1 ms, which run out before the first round returns.
	MinTTL = 100 * time.Millisecond
	// MaxTTL is the longest lease, as on the other lockers.
	MaxTTL = 24 * time.Hour
)

// Defaults of Options.
const (
	DefaultPrefix      = "fence:"
	DefaultDriftFactor = 0.01
	DefaultRetryCount  = 3
	DefaultRetryDelay  = 20 * time.Millisecond
)

// Options configure the Locker of New. A nil *Options means all defaults.
type Options struct {
	// Prefix starts the names of the locker's keys and channel on every
	// master (see the package doc, "Records"). Lockers that share keys
	// must share the prefix. Default: DefaultPrefix, "fence:".
	Prefix string
	// Clock is the locker's clock: the send times from which leases'
	// ValidUntil and the validity left after a round are computed, the
	// local times of HeldError and LockInfo, and the proposed tokens (see
	// the package doc, "Tokens"). Default: fence.SystemClock.
	Clock fence.Clock
	// DriftFactor is the share of the TTL allowed for the masters' clocks
	// running faster than this process's: an Acquire or Renew succeeds
	// only if a quorum answered before TTL - (elapsed + TTL*DriftFactor +
	// 2ms) ran out. From 0 (the default, meaning DefaultDriftFactor,
	// 0.01) to below 0.5.
	DriftFactor float64
	// RetryCount is how many more times Acquire tries when the votes
	// split: a quorum of masters is free, but contenders took them apart
	// and none got a quorum. Each retry waits a random time up to
	// RetryDelay first (on the system clock, not Clock). A key held by
	// one owner on a quorum is never retried. Default (0):
	// DefaultRetryCount, 3; -1 for none.
	RetryCount int
	// RetryDelay is the longest wait before a retry after a split.
	// Default: DefaultRetryDelay, 20 ms.
	RetryDelay time.Duration
}

// New returns a *fence.Locker over masters, one Client per independent
// Redis master (not replicas of one another). It needs at least one; use
// three or more, an odd number: a lease needs a quorum of
// len(masters)/2+1 of them, so 3 masters survive the loss of one and 5 of
// two. It checks the options but does not contact the masters.
//
// The clients should fail fast: Redlock waits for every master's answer
// (or its error) before deciding, so a master that hangs delays every
// call by the client's timeout. Give them short timeouts (DialTimeout,
// ReadTimeout, WriteTimeout of a few hundred milliseconds) and
// ContextTimeoutEnabled, as the URL opener does.
//
// The Locker's Close stops its subscriptions for release notifications,
// if it has any, and waits for them to end. It does not close the
// clients given to New; the caller does, after Close. Its As gives the
// masters (see the package doc).
func New(masters []Client, opts *Options) (*fence.Locker, error) {
	d, err := newStore(masters, opts)
	if err != nil {
		return nil, err
	}
	return d.locker(nil)
}

// newStore checks the arguments of New and returns the store they make.
func newStore(masters []Client, opts *Options) (*store, error) {
	if len(masters) == 0 {
		return nil, &fence.InvalidError{Field: "masters", Reason: "none given"}
	}
	for i, c := range masters {
		if c == nil {
			return nil, &fence.InvalidError{Field: "masters", Reason: fmt.Sprintf("client %d is nil", i)}
		}
		for j := range i {
			if masters[j] == c {
				return nil, &fence.InvalidError{Field: "masters", Reason: fmt.Sprintf("clients %d and %d are the same", j, i)}
			}
		}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	switch {
	case o.DriftFactor == 0:
		o.DriftFactor = DefaultDriftFactor
	case o.DriftFactor < 0 || o.DriftFactor >= 0.5 || o.DriftFactor != o.DriftFactor:
		return nil, &fence.InvalidError{Field: "DriftFactor", Reason: fmt.Sprintf("%v is not from 0 to below 0.5", o.DriftFactor)}
	}
	switch {
	case o.RetryCount == 0:
		o.RetryCount = DefaultRetryCount
	case o.RetryCount == -1:
		o.RetryCount = 0
	case o.RetryCount < 0:
		return nil, &fence.InvalidError{Field: "RetryCount", Reason: fmt.Sprintf("%d is negative (-1 means none)", o.RetryCount)}
	}
	switch {
	case o.RetryDelay == 0:
		o.RetryDelay = DefaultRetryDelay
	case o.RetryDelay < 0:
		return nil, &fence.InvalidError{Field: "RetryDelay", Reason: fmt.Sprintf("%v is negative", o.RetryDelay)}
	}
	o.Clock = driver.ClockOrSystem(o.Clock)
	return newDriver(masters, o), nil
}

// locker returns the *fence.Locker over d, whose Close stops d's
// subscriptions and then calls closeClients, if not nil.
func (d *store) locker(closeClients func() error) (*fence.Locker, error) {
	return driver.NewLocker(d, &driver.LockerOptions{Clock: d.o.Clock, Close: func() error {
		d.notes.close()
		if closeClients != nil {
			return closeClients()
		}
		return nil
	}})
}
