package sqlite

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// maxAcquireAll is the most keys AcquireAll takes in one transaction; a
// larger set is refused with errors.ErrUnsupported, and the session
// takes its keys one at a time.
const maxAcquireAll = 10000

// Publish implements driver.Publisher: one statement sets the value of
// the lease (empty: none) with the lease's token beside it, if its owner
// and token hold it unexpired, and wakes this process's waiters for the
// key (other processes' pollers see the new value).
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	if lease.Token > maxToken {
		return fence.ErrNotHeld
	}
	if err := d.ready(ctx); err != nil {
		return err
	}
	var v any // NULL for an empty value
	if value != "" {
		v = []byte(value)
	}
	err := d.change(ctx, lease, d.q.publish, lease.Key, lease.Owner, int64(lease.Token), d.now(), v)
	if err != nil && strings.Contains(err.Error(), "no such column") {
		return fmt.Errorf("the lease table has no value column (it was made by an earlier version); run Create (fence.Locker.Create, or `fence create`) to add it: %w", driver.StoreMissing(err))
	}
	if err == nil {
		d.hub.Signal(lease.Key)
	}
	return err
}

// AcquireAll implements driver.MultiAcquirer: one write transaction
// (BEGIN IMMEDIATE, which takes the file's write lock at once) reads the
// keys' rows, and takes them all when none is held, in one statement;
// when one is held it writes nothing and reports the first held key in
// key order in a *fence.HeldError (a malformed row in a
// *fence.CorruptError). More than 10,000 keys are refused with an error
// matching errors.ErrUnsupported.
func (d *store) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	if len(keys) > maxAcquireAll {
		return nil, fmt.Errorf("%d keys in one transaction, more than %d: %w", len(keys), maxAcquireAll, errors.ErrUnsupported)
	}
	if err := d.ready(ctx); err != nil {
		return nil, err
	}
	keysJSON, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	pairs := make([][2]string, len(keys))
	for i := range keys {
		pairs[i] = [2]string{keys[i], owners[i]}
	}
	pairsJSON, err := json.Marshal(pairs)
	if err != nil {
		return nil, err
	}
	var leases []fence.Lease
	err = d.tx(ctx, func(conn *sql.Conn) error {
		leases = nil
		now := d.now()
		if err := d.checkFree(ctx, conn, string(keysJSON), now); err != nil {
			return err
		}
		rows, err := conn.QueryContext(ctx, d.q.takeAll, string(pairsJSON), now+int64(ttl))
		if err != nil {
			return err
		}
		defer rows.Close()
		tokens := make(map[string]int64, len(keys))
		for rows.Next() {
			var key string
			var token int64
			if err := rows.Scan(&key, &token); err != nil {
				return err
			}
			tokens[key] = token
		}
		if err := rows.Err(); err != nil {
			return err
		}
		leases = make([]fence.Lease, len(keys))
		for i, key := range keys {
			t := tokens[key]
			if t < 1 {
				return fmt.Errorf("the statement issued no token for %q", key)
			}
			leases[i] = fence.Lease{Key: key, Owner: owners[i], Token: fence.Token(t), TTL: ttl}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return leases, nil
}

// checkFree reads the rows of keys (a JSON array) in the transaction on
// conn, and returns a *fence.HeldError for the first held at now, or a
// *fence.CorruptError for the first malformed, in key order.
func (d *store) checkFree(ctx context.Context, conn *sql.Conn, keys string, now int64) error {
	rows, err := conn.QueryContext(ctx, d.q.lockAll, keys)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			key, owner string
			token      int64
			expires    sql.NullInt64
		)
		if err := rows.Scan(&key, &owner, &token, &expires); err != nil {
			return err
		}
		switch {
		case owner == "":
			return &fence.CorruptError{Key: key, Reason: "owner is empty"}
		case token < 1:
			return &fence.CorruptError{Key: key, Reason: fmt.Sprintf("token %d is not positive", token)}
		case expires.Valid && expires.Int64 <= 0:
			return &fence.CorruptError{Key: key, Reason: fmt.Sprintf("expires %d is not a time after 1970", expires.Int64)}
		case expires.Valid && expires.Int64 > now:
			return &fence.HeldError{Key: key, Owner: owner, Token: fence.Token(token), ValidUntil: time.Unix(0, expires.Int64)}
		case token == maxToken:
			return &fence.CorruptError{Key: key, Reason: "token is 2^63-1, the largest the table holds: no higher one can be issued"}
		}
	}
	return rows.Err()
}

// tx runs fn in one write transaction (BEGIN IMMEDIATE) on a connection
// of its own, and commits when fn returns nil; otherwise it rolls back.
// The whole transaction runs again while SQLite answers busy (nothing
// was written), until ctx ends. A connection whose rollback failed is
// closed, never given back to the pool inside a transaction.
func (d *store) tx(ctx context.Context, fn func(conn *sql.Conn) error) error {
	return retry(ctx, func() error {
		conn, err := d.db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			return err
		}
		err = fn(conn)
		if err == nil {
			if _, err = conn.ExecContext(ctx, "COMMIT"); err == nil {
				return nil
			}
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		if _, rerr := conn.ExecContext(rctx, "ROLLBACK"); rerr != nil && !strings.Contains(rerr.Error(), "no transaction is active") {
			_ = conn.Raw(func(any) error { return sqldriver.ErrBadConn }) // close it
		}
		return err
	})
}

// rollbackTimeout bounds the rollback of a transaction that failed.
const rollbackTimeout = 5 * time.Second
