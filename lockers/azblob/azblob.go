package azblob

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/probe"
)

// Limits of the Azure blob locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes of UTF-8. Azure
	// allows blob names of 1,024 characters; 1,024 bytes are never more.
	MaxKeyLen = 1024
	// MaxOwnerLen is the longest owner id accepted, in bytes. Owner ids
	// are stored as metadata values: printable ASCII only.
	MaxOwnerLen = 256
	// MinTTL and MaxTTL bound the lease duration, which must be a whole
	// number of seconds: Azure's limits for a finite blob lease.
	MinTTL = 15 * time.Second
	MaxTTL = 60 * time.Second
	// DefaultCleanupTimeout is how long Acquire may spend releasing a
	// lease it could not finish taking when ctx is already done.
	DefaultCleanupTimeout = 5 * time.Second
	// DefaultProbeInterval is how often a waited-for key is probed when
	// Options.ProbeInterval is 0 (see the package doc, "Waiting").
	DefaultProbeInterval = probe.DefaultInterval
	// maxSegments is the largest number of '/'-separated segments in a
	// key, Azure's limit for blob names.
	maxSegments = 254
)

// Options configure the Locker of New. A nil *Options means all defaults.
type Options struct {
	// Clock supplies the send times from which Lease.ValidUntil is
	// computed, and tells Renew and Release when a lease has run out
	// locally (driver.LockerOptions.Clock). Expiry itself is measured by
	// the service. Default: fence.SystemClock.
	Clock fence.Clock
	// CleanupTimeout bounds the release of a lease that Acquire took but
	// could not finish (its token increment failed), when ctx is done.
	// Default: DefaultCleanupTimeout.
	CleanupTimeout time.Duration
	// ProbeInterval is how often the blob of a key that a Session.Lock
	// of this Locker waits for is probed, to wake the waiter when the
	// lease ends (see the package doc, "Waiting"): one Get Blob
	// Properties per waited-for key per interval. At least 10 ms;
	// negative turns probes off, and waiters poll at
	// fence.SessionOptions.PollInterval. Default:
	// DefaultProbeInterval.
	ProbeInterval time.Duration
}

// store is the driver.Locker on Azure blob leases: the store calls
// of the methods of fence.Locker, on input the portable Locker checked.
type store struct {
	c       *container.Client
	cleanup time.Duration
	clock   fence.Clock   // for driver.LockerOptions; nil for the system's
	probe   *probe.Prober // nil with probes off
}

var (
	_ driver.Locker  = (*store)(nil)
	_ driver.Creator = (*store)(nil)
	_ driver.Aser    = (*store)(nil)
)

// New returns a *fence.Locker that keeps its leases in the container of
// c.
//
// It takes the SDK's *container.Client rather than an interface of the
// calls it makes: the SDK builds a blob client and a lease client per
// blob and per lease id from the container client, and those are concrete
// types, so an interface would have to be a factory of factories. To
// observe or inject faults, pass a client built with
// azcore.ClientOptions.Transport (as this package's tests do).
//
// New checks the options but does not touch the service; create the
// container with the Locker's Create or with your own tools. The Locker's
// As gives c (see the package doc).
func New(c *container.Client, opts *Options) (*fence.Locker, error) {
	d, err := newStore(c, opts)
	if err != nil {
		return nil, err
	}
	return driver.NewLocker(d, &driver.LockerOptions{Clock: d.clock})
}

// newStore checks the arguments of New and returns the store they make.
func newStore(c *container.Client, opts *Options) (*store, error) {
	if c == nil {
		return nil, &fence.InvalidError{Field: "client", Reason: "nil"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.CleanupTimeout < 0:
		return nil, &fence.InvalidError{Field: "CleanupTimeout", Reason: fmt.Sprintf("%v is negative", o.CleanupTimeout)}
	case o.CleanupTimeout == 0:
		o.CleanupTimeout = DefaultCleanupTimeout
	}
	every, err := probe.Interval("ProbeInterval", o.ProbeInterval)
	if err != nil {
		return nil, err
	}
	d := &store{c: c, cleanup: o.CleanupTimeout, clock: o.Clock}
	if every > 0 {
		d.probe = probe.New(every, driver.ClockOrSystem(o.Clock), d.probeRead)
	}
	return d, nil
}

// As implements driver.Aser: it gives the client given to New (or made
// by the URL opener) to a **container.Client.
func (d *store) As(target any) bool {
	if p, ok := target.(**container.Client); ok {
		*p = d.c
		return true
	}
	return false
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "azblob", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL}
}

// Create implements driver.Creator: it creates the container if it does
// not exist yet. It is idempotent and safe to run concurrently.
func (d *store) Create(ctx context.Context) error {
	_, err := d.c.Create(ctx, nil)
	if err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		// The URL without its query, which may be a SAS token.
		u, _, _ := strings.Cut(d.c.URL(), "?")
		return fmt.Errorf("create container %s: %w", u, azblobconn.OneLine(err))
	}
	return nil
}
