package objlock

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

// ours reports whether st is lease's record, held.
func ours(st state, lease fence.Lease) bool {
	return st.found && st.rec.held && st.rec.owner == lease.Owner && st.rec.token == lease.Token
}

// Renew implements driver.Locker: it rewrites the record of lease
// with a new write id (so a new version, which restarts every
// observer's wait) under a precondition on the version d last saw of
// it.
func (d *Store) Renew(ctx context.Context, lease fence.Lease) error {
	return d.rewrite(ctx, lease, func(_ state, sent time.Time) record {
		return d.newRecord(lease.Owner, lease.Token, lease.TTL, sent)
	})
}

// Release implements driver.Locker: it writes a free record that
// keeps the lease's owner and token, under a precondition on the
// version d last saw of the lease's record.
func (d *Store) Release(ctx context.Context, lease fence.Lease) error {
	return d.rewrite(ctx, lease, func(st state, _ time.Time) record { return freed(st.rec) })
}

// rewrite writes next(state, send time) over lease's record while the
// record is the lease's, held, and returns a *fence.NotHeldError once it
// is not.
func (d *Store) rewrite(ctx context.Context, lease fence.Lease, next func(state, time.Time) record) error {
	name, err := d.name(lease.Key)
	if err != nil {
		return err
	}
	st, err := d.remembered(ctx, lease.Key, name)
	if err != nil {
		return err
	}
	if !ours(st, lease) && st.cached {
		if st, err = d.look(ctx, lease.Key, name); err != nil {
			return err
		}
	}
	for range maxLeaseWrites {
		if !ours(st, lease) {
			return &fence.NotHeldError{Key: lease.Key, Reason: fmt.Sprintf("released, broken or taken over: the record no longer holds token %d for this owner", lease.Token)}
		}
		sent := d.clock.Now()
		rec := next(st, sent)
		version, err := d.write(ctx, name, st.version, rec.encode())
		if err == nil {
			d.wrote(name, version, rec, sent)
			return nil
		}
		if !errors.Is(err, ErrConflict) {
			return err
		}
		if st, err = d.look(ctx, lease.Key, name); err != nil {
			return err
		}
	}
	// Still the lease's record, rewritten by someone else each time: not
	// a definite loss, so not ErrNotHeld.
	return fmt.Errorf("the lease's record changed under %d writes in a row", maxLeaseWrites)
}
