package azblob

import (
	"context"
	"fmt"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/azblobconn"
)

// Renew implements driver.Locker: one RenewLease with the lease's id
// (see LeaseID), which the service refuses unless that very lease is the
// blob's; the lease then runs its TTL again from the service's receipt.
// Azure would also renew a lease that ran out while nobody took the blob
// since; the portable Locker refuses those before the store is called.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	if err := checkInput(lease.Key, lease.Owner, lease.TTL); err != nil {
		return err
	}
	return notHeld(d.renewLease(ctx, lease.Key, LeaseID(lease.Key, lease.Owner, lease.Token, lease.TTL)))
}

// Release implements driver.Locker: one ReleaseLease with the
// lease's id, which the service refuses unless that very lease is the
// blob's; the blob and its metadata stay.
//
// The TTL is part of the lease id, so a lease with a TTL no Acquire gives
// out is refused with fence.ErrInvalid, as by Renew; the portable Locker
// checks the range of TTLs for Renew only.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	if err := driver.ValidateTTL(lease.TTL, MinTTL, MaxTTL); err != nil {
		return err
	}
	if err := checkInput(lease.Key, lease.Owner, lease.TTL); err != nil {
		return err
	}
	return notHeld(d.releaseLease(ctx, lease.Key, LeaseID(lease.Key, lease.Owner, lease.Token, lease.TTL)))
}

// notHeld maps the error of a lease operation: the service's answers that
// the lease is not the caller's match fence.ErrNotHeld.
func notHeld(err error) error {
	if err != nil && isNotHeld(err) {
		return fmt.Errorf("%w: %w", fence.ErrNotHeld, azblobconn.OneLine(err))
	}
	return azblobconn.OneLine(err)
}
