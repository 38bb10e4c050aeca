package postgres

import (
	"context"
	"database/sql"
	"errors"
	"math"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fencekit/fence"
)

// Renew implements driver.Locker: one conditional UPDATE that extends
// the lease by its TTL, measured on the server, if the row still has the
// lease's owner and token and has not expired.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	if !storable(lease.Token) {
		return fence.ErrNotHeld
	}
	n, err := d.db.exec(ctx, d.q.renew, lease.Key, lease.Owner, int64(lease.Token), micros(lease.TTL))
	if err != nil {
		return storeErr(err)
	}
	if n != 1 {
		return fence.ErrNotHeld
	}
	return nil
}

// Release implements driver.Locker: one conditional UPDATE that
// clears the expiry if the row still has the lease's owner and token and
// has not expired, and notifies the key's waiters if it did. The row and
// its counter stay.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	if !storable(lease.Token) {
		return fence.ErrNotHeld
	}
	payload, slot := keyNotice(lease.Key)
	n, err := d.db.exec(ctx, d.q.release, lease.Key, lease.Owner, int64(lease.Token), payload, slot)
	if err != nil {
		return storeErr(err)
	}
	if n != 1 {
		return fence.ErrNotHeld
	}
	return nil
}

// storable reports whether t fits PostgreSQL's bigint. A token beyond it
// was never issued by this locker, so its lease is simply not held.
func storable(t fence.Token) bool { return uint64(t) <= math.MaxInt64 }

// Break implements driver.Locker: it clears the expiry of key's row
// whoever holds it, keeping the counter, so the next token is higher than
// the broken holder's, and notifies the key's waiters.
func (d *store) Break(ctx context.Context, key string) error {
	payload, slot := keyNotice(key)
	if _, err := d.db.exec(ctx, d.q.brk, key, payload, slot); err != nil {
		return storeErr(err)
	}
	return nil
}

// Inspect implements driver.Locker. ValidUntil is the server's
// expiry translated to the driver's clock as for HeldError, and Value
// the value published with the current lease. A row that breaks the
// table's invariants gets a *fence.CorruptError.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	var (
		owner     pgtype.Text
		token     pgtype.Int8
		expires   pgtype.Timestamptz
		serverNow pgtype.Timestamptz
		value     pgtype.Text
	)
	sent := d.clock.Now()
	err := d.db.queryRow(ctx, d.q.inspect, key).Scan(&owner, &token, &expires, &serverNow, &value)
	if errors.Is(err, sql.ErrNoRows) { // pgx.ErrNoRows matches it too
		return fence.LockInfo{Key: key}, nil
	}
	if err != nil {
		return fence.LockInfo{}, storeErr(err)
	}
	r, err := checkRow(key, owner, token, expires)
	if err != nil {
		return fence.LockInfo{}, err
	}
	info := fence.LockInfo{Key: key, Owner: r.owner, Token: r.token}
	if r.heldAt(serverNow.Time) {
		info.Held, info.ValidUntil = true, localTime(sent, r.expires, serverNow.Time)
		if info.Value, err = decodeValue(key, value); err != nil {
			return fence.LockInfo{}, err
		}
	}
	return info, nil
}
