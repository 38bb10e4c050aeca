package postgres

import (
	"context"
	"errors"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fencekit/fence"
)

// checkLease validates a lease handed to Renew or Release. held is false
// for a token this locker can never have issued (beyond PostgreSQL's
// bigint), which is then simply not held.
func checkLease(lease fence.Lease) (held bool, err error) {
	if err := fence.ValidateLease(lease, MaxKeyLen); err != nil {
		return false, err
	}
	if err := fence.ValidateKey("owner", lease.Owner, MaxOwnerLen); err != nil {
		return false, err
	}
	return uint64(lease.Token) <= math.MaxInt64, nil
}

// Renew implements fence.Locker: one conditional UPDATE that extends the
// lease by its TTL, measured on the server, if the row still has the
// lease's owner and token and has not expired. The returned lease's
// ValidUntil is the send time plus TTL.
func (l *Locker) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	held, err := checkLease(lease)
	if err != nil {
		return fence.Lease{}, err
	}
	if err := fence.ValidateTTL(lease.TTL, MinTTL, MaxTTL); err != nil {
		return fence.Lease{}, err
	}
	if !held {
		return fence.Lease{}, fence.ErrNotHeld
	}
	sent := l.clock.Now()
	tag, err := l.db.Exec(ctx, l.q.renew, lease.Key, lease.Owner, int64(lease.Token), micros(lease.TTL))
	if err != nil {
		return fence.Lease{}, wrap(ctx, "renew "+quote(lease.Key), err)
	}
	if tag.RowsAffected() != 1 {
		return fence.Lease{}, fence.ErrNotHeld
	}
	lease.ValidUntil = sent.Add(lease.TTL)
	return lease, nil
}

// Release implements fence.Locker: one conditional UPDATE that clears the
// expiry if the row still has the lease's owner and token and has not
// expired. The row and its counter stay.
func (l *Locker) Release(ctx context.Context, lease fence.Lease) error {
	held, err := checkLease(lease)
	if err != nil {
		return err
	}
	if !held {
		return fence.ErrNotHeld
	}
	tag, err := l.db.Exec(ctx, l.q.release, lease.Key, lease.Owner, int64(lease.Token))
	if err != nil {
		return wrap(ctx, "release "+quote(lease.Key), err)
	}
	if tag.RowsAffected() != 1 {
		return fence.ErrNotHeld
	}
	return nil
}

// Break implements fence.Locker: it clears the expiry of key's row whoever
// holds it, keeping the counter, so the next token is higher than the
// broken holder's.
func (l *Locker) Break(ctx context.Context, key string) error {
	if err := fence.ValidateKey("key", key, MaxKeyLen); err != nil {
		return err
	}
	if _, err := l.db.Exec(ctx, l.q.brk, key); err != nil {
		return wrap(ctx, "break "+quote(key), err)
	}
	return nil
}

// Inspect implements fence.Locker. ValidUntil is the server's expiry
// translated to l's clock as for HeldError. A row that breaks the table's
// invariants gets an error matching fence.ErrCorrupt.
func (l *Locker) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	if err := fence.ValidateKey("key", key, MaxKeyLen); err != nil {
		return fence.LockInfo{}, err
	}
	var (
		owner     pgtype.Text
		token     pgtype.Int8
		expires   pgtype.Timestamptz
		serverNow pgtype.Timestamptz
	)
	sent := l.clock.Now()
	err := l.db.QueryRow(ctx, l.q.inspect, key).Scan(&owner, &token, &expires, &serverNow)
	if errors.Is(err, pgx.ErrNoRows) {
		return fence.LockInfo{Key: key}, nil
	}
	if err != nil {
		return fence.LockInfo{}, wrap(ctx, "inspect "+quote(key), err)
	}
	r, err := checkRow(key, owner, token, expires)
	if err != nil {
		return fence.LockInfo{}, err
	}
	info := fence.LockInfo{Key: key, Owner: r.owner, Token: r.token}
	if r.heldAt(serverNow.Time) {
		info.Held, info.ValidUntil = true, localTime(sent, r.expires, serverNow.Time)
	}
	return info, nil
}
