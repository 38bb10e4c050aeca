package azblob

import (
	"context"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/leases"
)

// Limits of the Azure blob locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes of UTF-8. Azure
	// allows blob names of 1,024 characters; 1,024 bytes are never more.
	MaxKeyLen = 1024
	// MaxSegments is the largest number of '/'-separated segments in a
	// key, Azure's limit for blob names.
	MaxSegments = 254
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
)

// Options configure a Locker. A nil *Options means all defaults.
type Options struct {
	// Clock supplies the send times from which Lease.ValidUntil is
	// computed, and tells Renew and Release when a lease has run out
	// locally. Expiry itself is measured by the service. Default:
	// fence.SystemClock.
	Clock fence.Clock
	// CleanupTimeout bounds the release of a lease that Acquire took but
	// could not finish (its token increment failed), when ctx is done.
	// Default: DefaultCleanupTimeout.
	CleanupTimeout time.Duration
}

// Locker is a fence.Locker on the blobs of one Azure Storage container.
// Create it with New; it is safe for concurrent use.
type Locker struct {
	c       *container.Client
	clock   fence.Clock
	cleanup time.Duration
	book    leases.Book // latest ValidUntil of the leases l renewed
}

var _ fence.Locker = (*Locker)(nil)

// New returns a Locker that keeps its leases in the container of c.
//
// It takes the SDK's *container.Client rather than an interface of the
// calls it makes: the SDK builds a blob client and a lease client per
// blob and per lease id from the container client, and those are concrete
// types, so an interface would have to be a factory of factories. To
// observe or inject faults, pass a client built with
// azcore.ClientOptions.Transport (as this package's tests do).
//
// New checks the options but does not touch the service; create the
// container with CreateContainer or with your own tools.
func New(c *container.Client, opts *Options) (*Locker, error) {
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
	return &Locker{c: c, clock: fence.ClockOrSystem(o.Clock), cleanup: o.CleanupTimeout}, nil
}

// CreateContainer creates the Locker's container if it does not exist yet.
// It is idempotent and safe to run concurrently.
func (l *Locker) CreateContainer(ctx context.Context) error {
	_, err := l.c.Create(ctx, nil)
	if err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		return wrap(ctx, "create container "+quote(l.c.URL()), err)
	}
	return nil
}
