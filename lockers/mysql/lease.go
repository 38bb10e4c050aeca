package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Acquire implements driver.Locker: one INSERT .. ON DUPLICATE KEY
// UPDATE that takes the key if it is new, free or expired, incrementing
// its token, and otherwise changes nothing and reports the holder in a
// *fence.HeldError, whose ValidUntil is the holder's remaining time on the
// server added to the send time on the driver's clock. On MariaDB the
// holder comes back with the statement (RETURNING); on MySQL a second
// statement reads it. The lease returned has no ValidUntil: the
// portable fence.Locker sets it to its send time plus ttl.
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	start := time.Now()
	lease, err := d.acquire(ctx, key, owner, ttl)
	if err == nil && d.bells != nil {
		d.bells.ring(bellName(d.table, key), int64(lease.Token), start.Add(ttl))
	}
	return lease, err
}

// acquire is Acquire without the bell.
func (d *store) acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	dia, err := d.dialect(ctx)
	if err != nil {
		return fence.Lease{}, err
	}
	if dia == dialectMariaDB {
		return d.acquireReturning(ctx, key, owner, ttl)
	}
	var won int64
	err = retry(ctx, "acquire", func() error {
		res, err := d.exec(ctx, d.q.acquire, key, owner, micros(ttl))
		if err != nil {
			return err
		}
		won, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return fence.Lease{}, err
	}
	if won > 0 {
		return fence.Lease{Key: key, Owner: owner, Token: fence.Token(won), TTL: ttl}, nil
	}
	// Held when the statement ran: ask who holds it now.
	info, err := d.Inspect(ctx, key)
	if err != nil {
		return fence.Lease{}, err
	}
	if !info.Held {
		return fence.Lease{}, driver.ErrAcquireRaced // freed since
	}
	return fence.Lease{}, &fence.HeldError{Key: key, Owner: info.Owner, Token: info.Token, ValidUntil: info.ValidUntil}
}

// acquireReturning is Acquire on MariaDB: the statement returns the
// token won (or 0) and the row as the statement left it.
func (d *store) acquireReturning(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	var (
		won  int64
		cols rowCols
		sent time.Time
	)
	err := retry(ctx, "acquire", func() error {
		sent = d.clock.Now()
		return d.queryRow(ctx, d.q.acquireReturning, key, owner, micros(ttl)).
			Scan(append([]any{&won}, cols.dest()...)...)
	})
	if err != nil {
		return fence.Lease{}, err
	}
	if won > 0 {
		if !cols.token.Valid || cols.token.Int64 != won {
			return fence.Lease{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("the statement won token %d but the row holds %v", won, cols.token)}
		}
		return fence.Lease{Key: key, Owner: owner, Token: fence.Token(won), TTL: ttl}, nil
	}
	r, err := cols.check(key)
	if err != nil {
		return fence.Lease{}, err
	}
	if !r.held() {
		// The statement judged the row as the server's clock stood when
		// it started; a row it left held but that reads free is one whose
		// lease ran out within the statement. Try again.
		return fence.Lease{}, driver.ErrAcquireRaced
	}
	return fence.Lease{}, &fence.HeldError{Key: key, Owner: r.owner, Token: r.token, ValidUntil: sent.Add(r.left)}
}

// Renew implements driver.Locker: one conditional UPDATE that extends
// the lease by its TTL, measured on the server, if the row still has the
// lease's owner and token and has not expired.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	start := time.Now()
	err := d.matchOne(ctx, "renew", lease, d.q.renew, micros(lease.TTL), lease.Key, lease.Owner, int64(lease.Token))
	if err == nil && d.bells != nil {
		d.bells.extend(bellName(d.table, lease.Key), int64(lease.Token), start.Add(lease.TTL))
	}
	return err
}

// Release implements driver.Locker: one conditional UPDATE that
// clears the expiry if the row still has the lease's owner and token and
// has not expired. The row and its counter stay.
//
// Then it frees the lease's bell, which wakes the waiters, whatever the
// outcome: a lease not held needs no bell either.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	err := d.matchOne(ctx, "release", lease, d.q.release, lease.Key, lease.Owner, int64(lease.Token))
	if d.bells != nil && storable(lease.Token) {
		d.bells.silence(bellName(d.table, lease.Key), int64(lease.Token))
	}
	return err
}

// matchOne runs renew or release, whose OK packet's last-insert id is the
// lease's token exactly when the row matched, and ErrNotHeld otherwise.
func (d *store) matchOne(ctx context.Context, op string, lease fence.Lease, query string, args ...any) error {
	if !storable(lease.Token) {
		return fence.ErrNotHeld
	}
	var id int64
	err := retry(ctx, op, func() error {
		res, err := d.exec(ctx, query, args...)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return err
	}
	if id != int64(lease.Token) {
		return fence.ErrNotHeld
	}
	return nil
}

// storable reports whether t fits the BIGINT token column. A token beyond
// it was never issued by this locker, so its lease is simply not held.
func storable(t fence.Token) bool { return uint64(t) <= math.MaxInt64 }

// Break implements driver.Locker: it clears the expiry of key's row
// whoever holds it, keeping the counter, so the next token is higher than
// the broken holder's.
//
// When a lease of this Locker held the key, Break then frees its bell,
// which wakes the waiters; the bell of a holder in another Locker is
// freed when that holder releases, or when its lease runs out.
func (d *store) Break(ctx context.Context, key string) error {
	err := retry(ctx, "break", func() error {
		_, err := d.exec(ctx, d.q.brk, key)
		return err
	})
	if err == nil && d.bells != nil {
		d.bells.silence(bellName(d.table, key), 0)
	}
	return err
}

// Inspect implements driver.Locker. ValidUntil is the server's
// remaining time added to the send time on the driver's clock. A row that
// breaks the table's invariants gets a *fence.CorruptError.
//
// On a table made without the value columns (by an earlier version),
// Inspect reads the row without them, with a second statement.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	var (
		cols  rowCols
		value []byte
	)
	sent := d.clock.Now()
	err := d.queryRow(ctx, d.q.inspectValue, key).Scan(append(cols.dest(), &value)...)
	if serverError(err) == erBadField {
		value = nil
		sent = d.clock.Now()
		err = d.queryRow(ctx, d.q.inspect, key).Scan(cols.dest()...)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fence.LockInfo{Key: key}, nil
	}
	if err != nil {
		return fence.LockInfo{}, classify("inspect", err)
	}
	r, err := cols.check(key)
	if err != nil {
		return fence.LockInfo{}, err
	}
	info := fence.LockInfo{Key: key, Owner: r.owner, Token: r.token}
	if r.held() {
		if len(value) > fence.MaxValueLen { // the column holds 512 bytes: a table altered by hand
			return fence.LockInfo{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("value holds %d bytes, more than %d", len(value), fence.MaxValueLen)}
		}
		info.Held, info.ValidUntil, info.Value = true, sent.Add(r.left), string(value)
	}
	return info, nil
}
