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
// under a precondition on the generation l last saw of it. Any copy of a
// lease works (see fence.Lease): a lease whose latest renewal by l has run
// out on l's clock is not renewed, and Renew returns fence.ErrNotHeld
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
	l.book.Record(renewed, renewed.ValidUntil.Add(-renewed.TTL))
	return renewed, nil
}

// Release implements fence.Locker: it writes a free record that keeps the
// lease's owner and token, under a precondition on the generation l last
// saw of the lease's record. Any copy of a lease works; a lease whose
// latest renewal by l has run out on l's clock is not released: Release
// returns fence.ErrNotHeld without writing.
func (l *Locker) Release(ctx context.Context, lease fence.Lease) error {
	name, err := l.checkLease(lease)
	if err != nil {
		return err
	}
	err = l.rewrite(ctx, lease, name, func(st state, _ time.Time) record { return freed(st.rec) })
	if err == nil {
		l.book.Forget(lease)
	}
	return err
}

// rewrite writes next(state, send time) over lease's record while the
// record is the lease's, held, and the lease has not run out on l's clock
// (by the latest ValidUntil l gave it). A lease found not held is
// forgotten.
func (l *Locker) rewrite(ctx context.Context, lease fence.Lease, name string, next func(state, time.Time) record) error {
	err := l.rewriteHeld(ctx, lease, name, next)
	if errors.Is(err, fence.ErrNotHeld) {
		l.book.Forget(lease)
	}
	return err
}

func (l *Locker) rewriteHeld(ctx context.Context, lease fence.Lease, name string, next func(state, time.Time) record) error {
	until := l.book.ValidUntil(lease)
	if !l.clock.Now().Before(until) {
		return notHeld("ran out at "+until.String()+" on this locker's clock", lease)
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
			return notHeld("its record is no longer the lease's, held", lease)
		}
		sent := l.clock.Now()
		if !sent.Before(until) {
			return notHeld("ran out at "+until.String()+" on this locker's clock", lease)
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

// notHeld is the error of a Renew or Release of lease that is not held,
// with why.
func notHeld(why string, lease fence.Lease) error {
	return fmt.Errorf("fence/gcs: lease on %q (token %d): %s: %w", lease.Key, lease.Token, why, fence.ErrNotHeld)
}
