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
// it. The published value stays.
func (d *Store) Renew(ctx context.Context, lease fence.Lease) error {
	return d.rewrite(ctx, lease, func(st state, sent time.Time) record {
		r := d.newRecord(lease.Owner, lease.Token, lease.TTL, sent)
		r.value = st.rec.value
		return r
	})
}

// Publish implements driver.Publisher: it rewrites the record of lease
// with value and a new write id, under the same precondition as Renew;
// "" clears the value. The lease's duration and, in trusted-clock mode,
// its stored expiry stay as the last renewal wrote them. The write makes
// a new version of the object, which a clock-free observer cannot tell
// from a renewal: it restarts its wait, as a renewal sent at the same
// moment would, and never for longer. The probes of NotifyRelease see the
// new version and read the value.
func (d *Store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	return d.rewrite(ctx, lease, func(st state, _ time.Time) record {
		r := st.rec
		r.write, r.value = newWriteID(), value
		return r
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
