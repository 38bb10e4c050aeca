package nats

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Acquire implements driver.Locker. It decides on the last state of
// key's entry that d knows (read first when it knows none) and writes a
// held record on the condition that the entry is still that revision (or
// that there is none): Create for a key never written, Update with the
// expected last revision otherwise. The token is the revision of that
// write. A key is takeable when it has no entry, a free record, or a held
// record whose revision d has seen unchanged for the lease duration it
// stores (clock-free expiry). When the remembered state was stale, the
// entry is read once and the decision made again; a lost race or a live
// lease returns a *fence.HeldError (driver.ErrAcquireRaced when what won
// the race left the key takeable).
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	kv, err := d.bind(ctx)
	if err != nil {
		return fence.Lease{}, err
	}
	name := keyName(key)
	st, err := d.remembered(ctx, key, name)
	if err != nil {
		return fence.Lease{}, err
	}
	for {
		now := d.clock.Now()
		if held, until := d.holding(st, now); held {
			if st.cached {
				// The holder may have let go since: look again.
				if st, err = d.look(ctx, key, name); err != nil {
					return fence.Lease{}, err
				}
				continue
			}
			return fence.Lease{}, &fence.HeldError{Key: key, Owner: st.rec.owner, Token: st.rec.token, ValidUntil: until}
		}
		rec := record{held: true, owner: owner, ttl: ttl}
		var prev uint64
		if st.found {
			prev = st.rec.revision
		}
		rev, err := d.put(ctx, kv, name, prev, rec.encode(true))
		if err == nil {
			rec.token, rec.revision = fence.Token(rev), rev
			d.wrote(name, rec, now)
			return fence.Lease{Key: key, Owner: owner, Token: rec.token, TTL: ttl, ValidUntil: now.Add(ttl)}, nil
		}
		if !errors.Is(err, errConflict) {
			return fence.Lease{}, err
		}
		// Another write came first. Read what it left: a decision made on
		// a stale memory is made again; a lost race is reported.
		wasCached := st.cached
		if st, err = d.look(ctx, key, name); err != nil {
			return fence.Lease{}, err
		}
		if wasCached {
			continue
		}
		held, until := d.holding(st, d.clock.Now())
		if !held {
			return fence.Lease{}, driver.ErrAcquireRaced
		}
		return fence.Lease{}, &fence.HeldError{Key: key, Owner: st.rec.owner, Token: st.rec.token, ValidUntil: until}
	}
}

// maxLeaseWrites bounds the writes of one Renew, Release or Publish that
// lose to writes of the same lease by another Locker (each loss is
// followed by a read that shows whether the lease is still held).
const maxLeaseWrites = 4

// ours reports whether st is lease's record, held.
func ours(st state, lease fence.Lease) bool {
	return st.found && st.rec.held && st.rec.owner == lease.Owner && st.rec.token == lease.Token
}

// Renew implements driver.Locker: it writes the lease's record again
// (owner, token, the lease's TTL and the published value) on the
// condition that the entry is the revision d last saw of it. The new
// revision restarts every observer's wait.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	return d.rewrite(ctx, lease, func(st state) record {
		return record{held: true, owner: lease.Owner, token: lease.Token, ttl: lease.TTL, value: st.rec.value}
	})
}

// Publish implements driver.Publisher: it writes the lease's record with
// value, under the same condition as Renew; "" clears the value. The
// lease's duration stays. The write makes a new revision, which a
// contender cannot tell from a renewal: it restarts its wait, as a
// renewal sent at the same moment would. Watches (NotifyRelease) see the
// new value and wake their waiters.
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	return d.rewrite(ctx, lease, func(st state) record {
		r := st.rec
		r.value = value
		return r
	})
}

// Release implements driver.Locker: it writes a free record that keeps
// the lease's owner and token, on the condition that the entry is the
// revision d last saw of the lease's record.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	return d.rewrite(ctx, lease, freed)
}

// freed returns the free record that ends st's lease, keeping its owner
// and token.
func freed(st state) record {
	return record{owner: st.rec.owner, token: st.rec.token, ttl: st.rec.ttl}
}

// rewrite writes next(state) over lease's record while the record is the
// lease's, held, and returns a *fence.NotHeldError once it is not.
func (d *store) rewrite(ctx context.Context, lease fence.Lease, next func(state) record) error {
	kv, err := d.bind(ctx)
	if err != nil {
		return err
	}
	name := keyName(lease.Key)
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
		rec := next(st)
		rev, err := d.put(ctx, kv, name, st.rec.revision, rec.encode(false))
		if err == nil {
			rec.revision = rev
			d.wrote(name, rec, sent)
			return nil
		}
		if !errors.Is(err, errConflict) {
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

// Break implements driver.Locker: it reads key's entry and, when it holds
// a lease (running or expired), writes a free record that keeps the
// holder's owner and token on the condition that the entry is still the
// revision read, so the next Acquire's revision, its token, is higher.
// When another write comes first it reads and tries again, until the
// write lands or ctx ends. A missing or free record is left as it is. A
// corrupted record is not written over: Break returns an error matching
// fence.ErrCorrupt.
func (d *store) Break(ctx context.Context, key string) error {
	kv, err := d.bind(ctx)
	if err != nil {
		return err
	}
	name := keyName(key)
	for {
		st, err := d.look(ctx, key, name)
		if err != nil {
			return err
		}
		if !st.found || !st.rec.held {
			return nil
		}
		sent := d.clock.Now()
		rec := freed(st)
		rev, err := d.put(ctx, kv, name, st.rec.revision, rec.encode(false))
		if err == nil {
			rec.revision = rev
			d.wrote(name, rec, sent)
			return nil
		}
		if !errors.Is(err, errConflict) || ctx.Err() != nil {
			return err
		}
	}
}

// Inspect implements driver.Locker. It reads key's entry and records the
// revision it saw, which starts (or continues) the clock-free wait for
// the lease to expire. ValidUntil is when d will consider the lease
// expired: a full lease after d first saw its revision. Value is the
// value published with the lease while it is held.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	if _, err := d.bind(ctx); err != nil {
		return fence.LockInfo{}, err
	}
	st, err := d.look(ctx, key, keyName(key))
	if err != nil {
		return fence.LockInfo{}, err
	}
	info := fence.LockInfo{Key: key}
	if !st.found {
		return info, nil
	}
	info.Owner, info.Token = st.rec.owner, st.rec.token
	info.Held, info.ValidUntil = d.holding(st, d.clock.Now())
	if info.Held {
		info.Value = st.rec.value
	}
	return info, nil
}
