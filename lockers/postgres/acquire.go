package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Acquire implements driver.Locker. It runs one statement that takes
// the key if it is free or expired, incrementing its token, and otherwise
// writes nothing and reports the holder in a *fence.HeldError, whose
// ValidUntil is the holder's remaining time on the server added to the
// send time on the driver's clock. A key seen for the first time (no row)
// takes a second statement, which creates its row with token 1. The lease
// it returns has no ValidUntil: the portable fence.Locker sets it to its
// send time plus ttl.
//
// In the rare case where the statement loses a race it cannot see (another
// session took the key between this statement's snapshot and its write,
// or created the new key's row first), Acquire returns
// driver.ErrAcquireRaced and the portable fence.Locker runs it once more
// to learn the new holder; if that loses a race too, the HeldError carries
// only the key.
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	var (
		won       pgtype.Int8
		curOwner  pgtype.Text
		curToken  pgtype.Int8
		curExpiry pgtype.Timestamptz
		serverNow time.Time
	)
	sent := d.clock.Now()
	err := d.db.queryRow(ctx, d.q.acquire, key, owner, micros(ttl)).
		Scan(&won, &curOwner, &curToken, &curExpiry, &serverNow)
	if errors.Is(err, sql.ErrNoRows) { // pgx.ErrNoRows matches it too
		return d.acquireNew(ctx, key, owner, ttl)
	}
	if err != nil {
		return fence.Lease{}, storeErr(err)
	}
	if won.Valid {
		return d.won(key, owner, ttl, won.Int64)
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

// acquireNew creates the row of a key that has none, with token 1.
func (d *store) acquireNew(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	var token int64
	err := d.db.queryRow(ctx, d.q.acquireNew, key, owner, micros(ttl)).Scan(&token)
	if errors.Is(err, sql.ErrNoRows) {
		return fence.Lease{}, driver.ErrAcquireRaced // a concurrent first acquire won
	}
	if err != nil {
		return fence.Lease{}, storeErr(err)
	}
	return d.won(key, owner, ttl, token)
}

// won returns the lease of a statement that issued token.
func (d *store) won(key, owner string, ttl time.Duration, token int64) (fence.Lease, error) {
	if token <= 0 {
		return fence.Lease{}, &fence.CorruptError{Key: key, Reason: "the server issued a token that is not positive"}
	}
	return fence.Lease{Key: key, Owner: owner, Token: fence.Token(token), TTL: ttl}, nil
}
