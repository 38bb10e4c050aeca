package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// maxAcquireAll is the most keys AcquireAll takes in one transaction (a
// statement takes at most 65,535 placeholders, three per key); a larger
// set is refused with errors.ErrUnsupported, and the session takes its
// keys one at a time.
const maxAcquireAll = 10000

// Publish implements driver.Publisher: one conditional UPDATE sets the
// value of the lease (empty: NULL) with the lease's token beside it, if
// the row still has the lease's owner and token and has not expired.
// Then it wakes the key's waiters: those of this Locker at once, and
// those of other Lockers by freeing the lease's bell for an instant,
// when this Locker rings it (see "Waking waiters" in the package doc).
// On a table made without the value columns it returns an error that
// says to run Create, matching fence.ErrStoreMissing.
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	var v any // NULL for an empty value
	if value != "" {
		v = []byte(value)
	}
	err := d.matchOne(ctx, "publish", lease, d.q.publish, v, lease.Key, lease.Owner, int64(lease.Token))
	if serverError(err) == erBadField {
		return fmt.Errorf("the lease table %s has no value column (it was made by an earlier version); run Create (fence.Locker.Create, or `fence create`) to add it: %w",
			d.table, driver.StoreMissing(err))
	}
	if err != nil {
		return err
	}
	d.local.signal(lease.Key)
	if d.bells != nil {
		d.bells.toll(bellName(d.table, lease.Key), int64(lease.Token))
	}
	return nil
}

// AcquireAll implements driver.MultiAcquirer: one transaction, at the
// server's default isolation level, locks the keys' rows in key order
// (SELECT .. FOR UPDATE on the primary key) and, when none is held,
// creates the rows of the new keys (token 1) and takes the others
// (token + 1) with one statement each, then commits. When a key is held
// it rolls back, having written nothing, and reports the first held key
// in key order in a *fence.HeldError (a malformed row in a
// *fence.CorruptError). A new key whose row another session created
// meanwhile makes the insert fail: it rolls back and returns
// driver.ErrAcquireRaced. A deadlock or lock wait timeout (InnoDB's gap
// locks on new keys make two transactions that create the same new key
// deadlock) undoes the transaction, which is sent again, up to three
// times in all. More than 10,000 keys are refused with an error
// matching errors.ErrUnsupported.
func (d *store) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	if len(keys) > maxAcquireAll {
		return nil, fmt.Errorf("%d keys in one transaction, more than %d: %w", len(keys), maxAcquireAll, errors.ErrUnsupported)
	}
	start := time.Now()
	var leases []fence.Lease
	err := retry(ctx, "acquire", func() (err error) {
		leases, err = d.acquireAll(ctx, keys, owners, ttl)
		return err
	})
	if err != nil {
		return nil, err
	}
	if d.bells != nil {
		for _, lease := range leases {
			d.bells.ring(bellName(d.table, lease.Key), int64(lease.Token), start.Add(ttl))
		}
	}
	return leases, nil
}

// acquireAll is one try of AcquireAll's transaction.
func (d *store) acquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) (leases []fence.Lease, err error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	in := "(?" + strings.Repeat(", ?", len(keys)-1) + ")"
	keyArgs := make([]any, len(keys))
	for i, k := range keys {
		keyArgs[i] = k
	}
	sent := d.clock.Now()
	prep := len(keys) <= maxPreparedSet
	rows, err := d.txQuery(ctx, tx, prep, "SELECT `key`, "+rowColumns+" FROM "+d.table+" WHERE `key` IN "+in+" ORDER BY `key` FOR UPDATE", keyArgs...)
	if err != nil {
		return nil, err
	}
	old := make(map[string]fence.Token, len(keys))
	var busy error
	for rows.Next() {
		var key string
		var cols rowCols
		if err := rows.Scan(append([]any{&key}, cols.dest()...)...); err != nil {
			rows.Close()
			return nil, err
		}
		r, err := cols.check(key)
		switch {
		case busy != nil:
		case err != nil:
			busy = err
		case r.held():
			busy = &fence.HeldError{Key: key, Owner: r.owner, Token: r.token, ValidUntil: sent.Add(r.left)}
		case r.token == 1<<63-1:
			busy = &fence.CorruptError{Key: key, Reason: "token is 2^63-1, the largest the table holds: no higher one can be issued"}
		}
		old[key] = r.token
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if busy != nil {
		return nil, busy
	}
	us := micros(ttl)
	var ins, upd []string
	var insVals, updVals []any
	for i, k := range keys {
		if _, ok := old[k]; ok {
			upd = append(upd, "WHEN ? THEN ?")
			updVals = append(updVals, k, owners[i])
			continue
		}
		ins = append(ins, "(?, ?, 1, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)")
		insVals = append(insVals, k, owners[i], us)
	}
	if len(ins) > 0 {
		_, err := d.txExec(ctx, tx, prep, "INSERT INTO "+d.table+" (`key`, owner, token, expires_at) VALUES "+strings.Join(ins, ", "), insVals...)
		if serverError(err) == erDupEntry {
			return nil, driver.ErrAcquireRaced // another session created a new key's row
		}
		if err != nil {
			return nil, err
		}
	}
	if len(upd) > 0 {
		updIn := "(?" + strings.Repeat(", ?", len(upd)-1) + ")"
		args := append(updVals, us)
		for i, k := range keys {
			if _, ok := old[k]; ok {
				args = append(args, keys[i])
			}
		}
		if _, err := d.txExec(ctx, tx, prep, "UPDATE "+d.table+" SET owner = CASE `key` "+strings.Join(upd, " ")+
			" END, token = token + 1, expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE `key` IN "+updIn, args...); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	leases = make([]fence.Lease, len(keys))
	for i, k := range keys {
		leases[i] = fence.Lease{Key: k, Owner: owners[i], Token: old[k] + 1, TTL: ttl}
	}
	return leases, nil
}

// maxPreparedSet is the most keys of an AcquireAll whose statements are
// kept prepared: each size of set is a statement of its own, and the
// server keeps at most max_prepared_stmt_count (16,382 by default) over
// all its connections. Larger sets are sent unprepared.
const maxPreparedSet = 16

// txQuery runs query in tx, prepared once it is (see prepared) when
// prep is true.
func (d *store) txQuery(ctx context.Context, tx *sql.Tx, prep bool, query string, args ...any) (*sql.Rows, error) {
	if s := d.prepared(prep, query); s != nil {
		return tx.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return tx.QueryContext(ctx, query, args...)
}

// txExec runs query in tx, prepared once it is (see prepared) when
// prep is true.
func (d *store) txExec(ctx context.Context, tx *sql.Tx, prep bool, query string, args ...any) (sql.Result, error) {
	if s := d.prepared(prep, query); s != nil {
		return tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// prepared returns query prepared when prep is true and it is.
func (d *store) prepared(prep bool, query string) *sql.Stmt {
	if !prep {
		return nil
	}
	return d.prep.get(query)
}

// localWaiters are the channels of this Locker's NotifyRelease calls,
// by key, which a Publish signals without the server.
type localWaiters struct {
	mu sync.Mutex
	m  map[string]map[chan struct{}]bool
}

// add registers c for key, and returns what removes it.
func (w *localWaiters) add(key string, c chan struct{}) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = make(map[string]map[chan struct{}]bool)
	}
	if w.m[key] == nil {
		w.m[key] = make(map[chan struct{}]bool)
	}
	w.m[key][c] = true
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.m[key], c)
		if len(w.m[key]) == 0 {
			delete(w.m, key)
		}
	}
}

// signal sends on every channel of key, without blocking.
func (w *localWaiters) signal(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.m[key] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}
