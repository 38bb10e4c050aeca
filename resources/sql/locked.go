package sql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// LockedPgx runs fn in a fenced pgx transaction under a lease on key, in
// one call: it takes the lock through sess, runs the transaction as
// RunPgx does (BEGIN and the fence first, in one round trip; fn; COMMIT),
// and releases the lock, also when fn panics. opts may be nil; see
// RunOptions.AcquireTimeout for waiting on a busy key. It is the shortest
// correct program for one fenced SQL write:
//
//	err := fences.LockedPgx(ctx, sess, pool, "account:alice", func(ctx context.Context, tx pgx.Tx) error {
//		_, err := tx.Exec(ctx, "UPDATE accounts SET balance = balance + 25 WHERE id = 'alice'")
//		return err
//	}, nil)
//
// It returns nil exactly when the transaction committed, and otherwise
// what RunPgx returns, or, when the lock could not be taken, the error of
// fence.Session.TryLock or Lock: matching fence.ErrHeld for a busy key,
// with nothing run. A release that fails does not change the result (the
// lease then expires after its TTL; the session's Observer sees it).
// Arguments are checked before the lock is taken.
func (f *Fences) LockedPgx(ctx context.Context, sess *fence.Session, db PgxBatcher, key string, fn func(ctx context.Context, tx pgx.Tx) error, opts *RunOptions) error {
	if err := f.noPgx("transaction", key); err != nil {
		return err
	}
	if err := f.lockedArgs(sess, key, opts, db == nil, fn == nil); err != nil {
		return err
	}
	if _, isTx := db.(pgx.Tx); isTx {
		return opError("transaction", key, &fence.InvalidError{Field: "db", Reason: "a pgx.Tx: LockedPgx begins its own transaction; pass the pool or connection"})
	}
	h, err := sess.Lock(ctx, key, &fence.LockOptions{Wait: opts.acquireTimeout()})
	if err != nil {
		return err
	}
	defer func() { _ = h.Release(ctx) }()
	return f.RunPgx(ctx, h, db, fn, opts)
}

// Locked is LockedPgx for database/sql: the transaction runs as Run runs
// it, with the fence as its first statement (one round trip of its own).
func (f *Fences) Locked(ctx context.Context, sess *fence.Session, db *sql.DB, key string, fn func(ctx context.Context, tx *sql.Tx) error, opts *RunOptions) error {
	if err := f.lockedArgs(sess, key, opts, db == nil, fn == nil); err != nil {
		return err
	}
	h, err := sess.Lock(ctx, key, &fence.LockOptions{Wait: opts.acquireTimeout()})
	if err != nil {
		return err
	}
	defer func() { _ = h.Release(ctx) }()
	return f.Run(ctx, h, db, fn, opts)
}

// lockedArgs checks what Locked and LockedPgx can check before they take
// the lock.
func (f *Fences) lockedArgs(sess *fence.Session, key string, opts *RunOptions, nilDB, nilFn bool) error {
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	invalid := func(field, reason string) error {
		return opError("transaction", key, &fence.InvalidError{Field: field, Reason: reason})
	}
	switch {
	case f == nil:
		return invalid("fences", "nil")
	case sess == nil:
		return invalid("session", "nil")
	case nilDB:
		return invalid("db", "nil")
	case nilFn:
		return invalid("fn", "nil")
	case o.AcquireTimeout < 0:
		return invalid("AcquireTimeout", fmt.Sprintf("%v is negative", o.AcquireTimeout))
	}
	name, err := fence.BoundName(key, o.Name)
	if err == nil {
		err = driver.ValidateKey("key", name, MaxKeyLen)
	}
	if err != nil {
		return opError("transaction", key, err)
	}
	return nil
}

// name is o.Name; "" when o is nil.
func (o *RunOptions) name() string {
	if o == nil {
		return ""
	}
	return o.Name
}

// acquireTimeout is o.AcquireTimeout; zero when o is nil.
func (o *RunOptions) acquireTimeout() time.Duration {
	if o == nil {
		return 0
	}
	return o.AcquireTimeout
}
