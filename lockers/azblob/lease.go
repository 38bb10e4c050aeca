package azblob

import (
	"context"
	"fmt"

	"github.com/fencekit/fence"
)

// Renew implements fence.Locker: one RenewLease with the lease's id (see
// LeaseID), which the service refuses unless that very lease is the
// blob's; the lease then runs its TTL again from the service's receipt.
// Any copy of a lease works (see fence.Lease): a lease whose latest
// renewal by the locker has passed on its Clock is not renewed
// (fence.ErrNotHeld, nothing sent), since Azure would revive it. A lease
// with a zero ValidUntil that the locker never renewed is first checked
// with a read conditioned on its id. The returned lease's ValidUntil is the
// send time plus TTL.
func (l *Locker) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	id, err := l.check(ctx, "renew", lease)
	if err != nil {
		return fence.Lease{}, err
	}
	sent := l.clock.Now()
	if err := l.renewLease(ctx, lease.Key, id); err != nil {
		return fence.Lease{}, l.failed(ctx, "renew", lease, err)
	}
	lease.ValidUntil = sent.Add(lease.TTL)
	l.book.Record(lease, sent)
	return lease, nil
}

// Release implements fence.Locker: one ReleaseLease with the lease's id,
// which the service refuses unless that very lease is the blob's; the
// blob and its metadata stay. Any copy of a lease works; a lease whose
// latest renewal has passed is not released (fence.ErrNotHeld, nothing
// sent), as for Renew.
func (l *Locker) Release(ctx context.Context, lease fence.Lease) error {
	id, err := l.check(ctx, "release", lease)
	if err != nil {
		return err
	}
	if err := l.releaseLease(ctx, lease.Key, id); err != nil {
		return l.failed(ctx, "release", lease, err)
	}
	l.book.Forget(lease)
	return nil
}

// check validates lease for op and returns its lease id, or an error
// matching fence.ErrNotHeld when the lease has run out locally.
func (l *Locker) check(ctx context.Context, op string, lease fence.Lease) (string, error) {
	if err := validateLease(lease); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", wrap(ctx, op+" "+quote(lease.Key), err)
	}
	id := LeaseID(lease.Key, lease.Owner, lease.Token, lease.TTL)
	until := l.book.ValidUntil(lease)
	if until.IsZero() {
		if _, err := l.read(ctx, lease.Key, id); err != nil {
			return "", l.failed(ctx, op, lease, err)
		}
		return id, nil
	}
	if now := l.clock.Now(); !now.Before(until) {
		return "", fmt.Errorf("fence/azblob: %s %q token %d: %w: it ran out at %v", op, lease.Key, lease.Token, fence.ErrNotHeld, until)
	}
	return id, nil
}

// failed maps the error of op on lease: the service's answers that the
// lease is not the caller's match fence.ErrNotHeld.
func (l *Locker) failed(ctx context.Context, op string, lease fence.Lease, err error) error {
	if isNotHeld(err) {
		l.book.Forget(lease)
		return fmt.Errorf("fence/azblob: %s %q token %d: %w: %w", op, lease.Key, lease.Token, fence.ErrNotHeld, err)
	}
	return wrap(ctx, fmt.Sprintf("%s %q token %d", op, lease.Key, lease.Token), err)
}
