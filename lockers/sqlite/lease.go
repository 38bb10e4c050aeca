package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
	"github.com/fencekit/fence/internal/sqlitefile"
)

// Acquire implements driver.Locker: one statement takes the key if it is
// new, free or expired, adding one to its token; when it took nothing,
// Acquire reads the row to name the holder in a *fence.HeldError, or
// returns driver.ErrAcquireRaced when the row it reads is free (released
// between the two statements).
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	if err := d.ready(ctx); err != nil {
		return fence.Lease{}, err
	}
	now := d.now()
	var token int64
	err := retry(ctx, func() error {
		return d.db.QueryRowContext(ctx, d.q.acquire, key, owner, now+int64(ttl), now).Scan(&token)
	})
	switch {
	case err == nil && token >= 1:
		return fence.Lease{Key: key, Owner: owner, Token: fence.Token(token), TTL: ttl}, nil
	case err == nil:
		return fence.Lease{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("the table issued token %d", token)}
	case !errors.Is(err, sql.ErrNoRows):
		return fence.Lease{}, err
	}
	r, found, err := d.read(ctx, key)
	switch {
	case err != nil:
		return fence.Lease{}, err
	case found && r.heldAt(d.now()):
		return fence.Lease{}, &fence.HeldError{Key: key, Owner: r.owner, Token: r.token, ValidUntil: time.Unix(0, r.expires)}
	case found && r.token == maxToken:
		return fence.Lease{}, &fence.CorruptError{Key: key, Reason: "token is 2^63-1, the largest the table holds: no higher one can be issued"}
	}
	return fence.Lease{}, driver.ErrAcquireRaced
}

// Renew implements driver.Locker: one statement extends the lease by its
// TTL if its owner and token hold it unexpired.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	if lease.Token > maxToken {
		return fence.ErrNotHeld
	}
	if err := d.ready(ctx); err != nil {
		return err
	}
	now := d.now()
	return d.change(ctx, lease, d.q.renew, lease.Key, lease.Owner, int64(lease.Token), now, now+int64(lease.TTL))
}

// Release implements driver.Locker: one statement frees the lease if its
// owner and token hold it unexpired (compare and free), keeping the row
// and its counter, and wakes this process's waiters for the key.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	if lease.Token > maxToken {
		return fence.ErrNotHeld
	}
	if err := d.ready(ctx); err != nil {
		return err
	}
	if err := d.change(ctx, lease, d.q.release, lease.Key, lease.Owner, int64(lease.Token), d.now()); err != nil {
		return err
	}
	d.hub.Signal(lease.Key)
	return nil
}

// change runs stmt, an update of lease's row that matches it only while
// the lease is held, and explains a miss in a *fence.NotHeldError.
func (d *store) change(ctx context.Context, lease fence.Lease, stmt string, args ...any) error {
	n, err := d.exec(ctx, stmt, args...)
	switch {
	case err != nil:
		return err
	case n == 1:
		return nil
	}
	return d.notHeld(ctx, lease)
}

// exec runs stmt, again while SQLite answers busy, and returns the
// number of rows it changed.
func (d *store) exec(ctx context.Context, stmt string, args ...any) (int64, error) {
	var n int64
	err := retry(ctx, func() error {
		res, err := d.db.ExecContext(ctx, stmt, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n, err
}

// notHeld reads lease's row to say why the lease is not held.
func (d *store) notHeld(ctx context.Context, lease fence.Lease) error {
	r, found, err := d.read(ctx, lease.Key)
	why := ""
	switch {
	case err != nil:
		return fence.ErrNotHeld
	case !found:
		why = "the key was never acquired"
	case r.token != lease.Token:
		why = fmt.Sprintf("token %d has been issued since", r.token)
	case r.owner != lease.Owner:
		why = "held by another owner with the same token"
	case r.expires == 0:
		why = "released or broken"
	default:
		why = "expired"
	}
	return &fence.NotHeldError{Key: lease.Key, Reason: why}
}

// Break implements driver.Locker: one statement frees the key whoever
// holds it, keeping its counter, and wakes this process's waiters.
func (d *store) Break(ctx context.Context, key string) error {
	if err := d.ready(ctx); err != nil {
		return err
	}
	n, err := d.exec(ctx, d.q.brk, key)
	if err == nil && n > 0 {
		d.hub.Signal(key)
	}
	return err
}

// Inspect implements driver.Locker.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	if err := d.ready(ctx); err != nil {
		return fence.LockInfo{}, err
	}
	r, found, err := d.read(ctx, key)
	if err != nil || !found {
		return fence.LockInfo{Key: key}, err
	}
	info := fence.LockInfo{Key: key, Owner: r.owner, Token: r.token}
	if r.heldAt(d.now()) {
		info.Held, info.ValidUntil, info.Value = true, time.Unix(0, r.expires), r.value
	}
	return info, nil
}

// row is a well-formed row of the lease table.
type row struct {
	owner   string
	token   fence.Token
	expires int64  // Unix nanoseconds; 0 when free
	value   string // published with the row's token
}

// heldAt reports whether the lease is unexpired at now.
func (r row) heldAt(now int64) bool { return r.expires != 0 && r.expires > now }

// read reads key's row, reporting whether there is one, or a
// *fence.CorruptError when it breaks the table's invariants (someone
// edited it by hand): an empty owner, a token below 1, a negative
// expiry.
func (d *store) read(ctx context.Context, key string) (row, bool, error) {
	var (
		owner   string
		token   int64
		expires sql.NullInt64
		value   []byte
	)
	err := retry(ctx, func() error {
		return d.db.QueryRowContext(ctx, d.q.read, key).Scan(&owner, &token, &expires, &value)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return row{}, false, nil
	case err != nil:
		return row{}, false, err
	case owner == "":
		return row{}, true, &fence.CorruptError{Key: key, Reason: "owner is empty"}
	case token < 1:
		return row{}, true, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("token %d is not positive", token)}
	case expires.Valid && expires.Int64 <= 0:
		return row{}, true, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("expires %d is not a time after 1970", expires.Int64)}
	case len(value) > fence.MaxValueLen:
		return row{}, true, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("value holds %d bytes, more than %d", len(value), fence.MaxValueLen)}
	}
	return row{owner: owner, token: fence.Token(token), expires: expires.Int64, value: string(value)}, true, nil
}

// busyBackoff is the wait between the tries of a statement that SQLite
// answered busy after its busy timeout, or at once where it calls no
// busy handler (a schema change racing another).
var busyBackoff = backoff.Policy{First: time.Millisecond, Max: 50 * time.Millisecond}

// retry runs fn again while SQLite answers that the database is busy
// (nothing was written), until ctx ends.
func retry(ctx context.Context, fn func() error) error {
	for n := 1; ; n++ {
		err := fn()
		if !sqlitefile.Busy(err) {
			return err
		}
		if backoff.Sleep(ctx, busyBackoff.Delay(n)) != nil {
			return err
		}
	}
}
