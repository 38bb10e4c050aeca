package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// AdvisoryKey returns the 64-bit advisory lock key that TryXactLock uses for
// key: the FNV-1a 64-bit hash of key's UTF-8 bytes (offset basis
// 0xcbf29ce484222325, prime 0x100000001b3), its bits read as a two's
// complement int64. Programs in other languages compute the same value to
// share the lock. Distinct keys may collide (with probability about n²/2⁶⁵
// for n keys); a collision only makes two keys exclude each other.
func AdvisoryKey(key string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key)) // hash.Hash.Write never fails
	return int64(h.Sum64())
}

// TryXactLock tries once, without waiting, to take the transaction-scoped
// advisory lock of key (pg_try_advisory_xact_lock on AdvisoryKey(key)) in
// tx. It reports whether tx now holds the lock; false means another
// transaction holds it.
//
// Use it when the work protected by the lock is itself done in tx. The
// transaction is then the fence: the lock lasts until tx commits or rolls
// back, a holder that pauses or loses its connection loses the lock and its
// uncommitted writes together, and nothing outlives the transaction, so no
// token is needed. The lock is not visible to Locker leases on the same
// key: the two kinds of lock do not exclude each other.
//
// The key follows the Locker's rules (non-empty, at most MaxKeyLen bytes,
// UTF-8, no NUL); a bad one gets an error matching fence.ErrInvalid. Errors
// are *fence.OpError, "fence/postgres: advisory lock <key>: <cause>", and
// match ctx.Err() when ctx ended.
func TryXactLock(ctx context.Context, tx pgx.Tx, key string) (bool, error) {
	fail := func(err error) (bool, error) {
		return false, &fence.OpError{Backend: "postgres", Op: "advisory lock", Key: key, Err: err}
	}
	if err := driver.ValidateKey("key", key, MaxKeyLen); err != nil {
		return fail(err)
	}
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, AdvisoryKey(key)).Scan(&ok); err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (%w)", err, cerr)
		}
		return fail(err)
	}
	return ok, nil
}
