// Package azblob is a fence.Locker on Azure Blob Storage leases, driven
// through the Azure SDK for Go (github.com/Azure/azure-sdk-for-go/sdk/storage/azblob).
//
// Each key is one empty block blob in a container, named by the key
// verbatim (see ValidateKey for the names refused). The blob's metadata
// holds the fencing token (a counter that only grows), the owner of the
// last lease and that lease's duration. Blobs are never deleted: releasing
// or breaking a lease leaves the blob and its counter, so the next token
// continues the sequence. Do not delete the blobs or edit their metadata by
// hand; a deleted blob restarts its key's tokens at 1, and a token that is
// not a number makes every later Acquire fail with fence.ErrCorrupt.
//
// # How a lease is taken
//
// Acquire reads the blob (creating it with If-None-Match: * the first time,
// so concurrent creators cannot overwrite each other), then takes a blob
// lease with If-Match on the ETag it read: the atomic conditional step is
// the service's lease acquisition, which fails with LeaseAlreadyPresent
// while another lease is active. Right after, still under the lease, it
// writes the incremented token with the lease id and If-Match on the same
// ETag (lease operations do not change a blob's ETag). Tokens therefore only
// move under a lease, and each increment is a compare-and-swap from the
// value read: two acquirers can never issue the same token, even if one of
// them paused past its lease. If the increment fails, Acquire releases the
// lease and returns the error; no token was issued.
//
// # Lease ids
//
// Azure identifies a lease by a UUID that the acquirer proposes. This
// package derives it from the key, the owner, the token being issued and
// the TTL (see LeaseID), so owner ids need not be UUIDs, and every
// acquisition has a lease id of its own: a lease value with another owner,
// token or TTL than the one issued has another lease id and is refused by
// the service itself, and an Acquire retried by the owner that already
// holds the key proposes the next token's id and loses (fence.ErrHeld),
// as the contract wants. An Acquire retried after a failure between the
// lease and the token increment proposes the same id, which Azure accepts,
// and completes the first attempt.
//
// # Expiry
//
// The service measures expiry: leases last 15 to 60 whole seconds (MinTTL,
// MaxTTL); other durations are refused with fence.ErrInvalid. Infinite
// leases are not offered, since a holder that dies would keep the key
// until an operator breaks it. Azure lets the holder renew or release its
// own lease after expiry as long as nobody took it since; the contract
// does not, so Renew and Release of a lease whose ValidUntil (send time +
// TTL on the locker's Clock) has passed answer fence.ErrNotHeld without
// asking the service. They accept any copy of a lease (the one from
// Acquire or from any Renew) and judge it by the latest ValidUntil this
// Locker gave it. Azure does not report when a lease ends, so
// HeldError.ValidUntil and LockInfo.ValidUntil are zero.
//
// # Break
//
// Break breaks the lease at once (break period 0) and then takes and
// releases the blob under a fresh random lease id, because Azure lets the
// broken holder release a broken lease with its old id: after Break, the
// broken holder's Renew and Release answer fence.ErrNotHeld. The next
// Acquire increments the counter, so its token is higher.
//
// # Round trips
//
// Acquire: 3 on a known key (read, lease, increment), 4 the first time;
// a lost Acquire: 2 or 3, and it writes nothing. Renew and Release: 1.
// Inspect: 1. Break: 3 on a held key, 1 on a free one.
//
// # Ambiguous outcomes
//
// A request whose answer was lost may have been applied. Acquire settles
// its own steps with the store: after a lease request without an answer it
// re-reads the blob with the proposed lease id as a condition (the read
// succeeds only if that lease is active), and after an increment without
// an answer it re-reads the token and owner; what it cannot settle while
// ctx lasts it undoes by releasing the lease with its id (harmless if the
// lease is not ours). When ctx ends, the method returns an error wrapping
// ctx.Err() and the caller reconciles with Inspect, as the contract says.
// The SDK's own retries are safe: a repeated lease request with the same
// proposed id succeeds on our own lease, a repeated increment fails its
// If-Match and is recognised, a repeated Renew is a renewal. A repeated
// Release answers fence.ErrNotHeld (the lease is already free).
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence).
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
