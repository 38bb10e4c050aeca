package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Acquire implements driver.Locker. It runs one statement that takes
// the key if it is free, expired or new, incrementing its token, and
// otherwise writes nothing and reports the holder in a *fence.HeldError,
// whose ValidUntil is the holder's remaining time on the server added to
// the send time on the driver's clock. The lease it returns has no
// ValidUntil: the portable fence.Locker sets it to its send time plus ttl.
//
// In the rare case where the statement loses a race it cannot see (another
// session took the key between this statement's snapshot and its write),
// Acquire returns driver.ErrAcquireRaced and the portable fence.Locker runs it
// once more to learn the new holder; if that loses a race too, the
// HeldError carries only the key.
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	var (
		won       pgtype.Int8
		present   bool
		curOwner  pgtype.Text
		curToken  pgtype.Int8
		curExpiry pgtype.Timestamptz
		serverNow time.Time
	)
	sent := d.clock.Now()
	err := d.db.queryRow(ctx, d.q.acquire, key, owner, micros(ttl)).
		Scan(&won, &present, &curOwner, &curToken, &curExpiry, &serverNow)
	if err != nil {
		return fence.Lease{}, storeErr(err)
	}
	if won.Valid {
		if won.Int64 <= 0 {
			return fence.Lease{}, &fence.CorruptError{Key: key, Reason: "the server issued a token that is not positive"}
		}
		return fence.Lease{Key: key, Owner: owner, Token: fence.Token(won.Int64), TTL: ttl}, nil
	}
	if !present {
		return fence.Lease{}, driver.ErrAcquireRaced // a concurrent first acquire won
	}
	r, err := checkRow(key, curOwner, curToken, curExpiry)
	if err != nil {
		return fence.Lease{}, err
	}
	if !r.heldAt(serverNow) {
		return fence.Lease{}, driver.ErrAcquireRaced // free in the snapshot, taken since
	}
	return fence.Lease{}, &fence.HeldError{Key: key, Owner: r.owner, Token: r.token, ValidUntil: localTime(sent, r.expires, serverNow)}
}
