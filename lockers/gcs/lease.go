package gcs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
)

// maxLeaseWrites bounds the writes of one Renew or Release that lose to
// writes of the same lease by another Locker (each loss is followed by a
// read that shows whether the lease is still held).
const maxLeaseWrites = 4

// checkLease validates a lease handed to Renew or Release and returns the
// name of its object.
func (l *Locker) checkLease(lease fence.Lease) (string, error) {
	if err := fence.ValidateLease(lease, l.MaxKeyLen()); err != nil {
		return "", err
	}
	if err := fence.ValidateKey("owner", lease.Owner, MaxOwnerLen); err != nil {
		return "", err
	}
	return l.objectName(lease.Key)
}

// ours reports whether st is lease's record, held.
func ours(st state, lease fence.Lease) bool {
	return st.found && st.rec.held && st.rec.owner == lease.Owner && st.rec.token == lease.Token
}

// Renew implements fence.Locker: it rewrites the record of lease with a new
// write id (so a new generation, which restarts every observer's wait)
// under a precondition on the generation l last saw of it. A lease past its
// ValidUntil on l's clock is not renewed: Renew returns fence.ErrNotHeld
// without writing. The returned lease's ValidUntil is the send time plus
// TTL.
func (l *Locker) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	name, err := l.checkLease(lease)
	if err != nil {
		return fence.Lease{}, err
	}
	if err := fence.ValidateTTL(lease.TTL, MinTTL, MaxTTL); err != nil {
		return fence.Lease{}, err
	}
	var renewed fence.Lease
	err = l.rewrite(ctx, lease, name, func(_ state, sent time.Time) record {
		renewed = lease
		renewed.ValidUntil = sent.Add(lease.TTL)
		return l.newRecord(lease.Owner, lease.Token, lease.TTL, sent)
	})
	if err != nil {
		return fence.Lease{}, err
	}
	return renewed, nil
}

// Release implements fence.Locker: it writes a free record that keeps the
// lease's owner and token, under a precondition on the generation l last
// saw of the lease's record. A lease past its ValidUntil on l's clock is
// not released: Release returns fence.ErrNotHeld without writing.
func (l *Locker) Release(ctx context.Context, lease fence.Lease) error {
	name, err := l.checkLease(lease)
	if err != nil {
		return err
	}
	return l.rewrite(ctx, lease, name, func(st state, _ time.Time) record { return freed(st.rec) })
}

// rewrite writes next(state, send time) over lease's record while the record is the
// lease's, held, and the lease has not run out on l's clock.
func (l *Locker) rewrite(ctx context.Context, lease fence.Lease, name string, next func(state, time.Time) record) error {
	if !l.clock.Now().Before(lease.ValidUntil) {
		return fence.ErrNotHeld
	}
	st, err := l.remembered(ctx, lease.Key, name)
	if err != nil {
		return err
	}
	if !ours(st, lease) && st.cached {
		if st, err = l.look(ctx, lease.Key, name); err != nil {
			return err
		}
	}
	for range maxLeaseWrites {
		if !ours(st, lease) {
			return fence.ErrNotHeld
		}
		sent := l.clock.Now()
		if !sent.Before(lease.ValidUntil) {
			return fence.ErrNotHeld
		}
		rec := next(st, sent)
		gen, err := l.store.write(ctx, name, st.gen, rec.encode())
		if err == nil {
			l.wrote(name, gen, rec, sent)
			return nil
		}
		if !errors.Is(err, errConflict) {
			return err
		}
		if st, err = l.look(ctx, lease.Key, name); err != nil {
			return err
		}
	}
	// Still the lease's record, rewritten by someone else each time: not
	// a definite loss, so not ErrNotHeld.
	return fmt.Errorf("gcs: %q: the lease's record changed under %d writes in a row", lease.Key, maxLeaseWrites)
}
