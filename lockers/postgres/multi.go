package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.MultiAcquirer = (*store)(nil)

// maxAcquireAll is the most keys AcquireAll takes in one statement; a
// larger set is refused with errors.ErrUnsupported, and the session
// takes its keys one at a time. The statement locks one row per key.
const maxAcquireAll = 1000

// codeUniqueViolation is SQLSTATE unique_violation: AcquireAll's insert
// of a new key met a row that another session created meanwhile.
const codeUniqueViolation = "23505"

// acquireAllSQL is the statement of AcquireAll: it takes every key of
// an array, all or nothing, and writes nothing when any is held.
//
//   - cur reads the keys' rows in the statement's snapshot, without
//     locking; busy are those held or malformed. When there is one,
//     nothing below locks or writes a row, and the statement returns
//     the first busy row in key order.
//   - lck locks the free rows in key order, skipping (not waiting for)
//     a row another transaction has locked: the statement never waits
//     for a row lock, so it cannot take part in a deadlock. A row that
//     was taken since the snapshot is locked but fails the condition
//     again on its newest version (READ COMMITTED), and is left out.
//   - ok is true when nothing is busy and every row read is locked and
//     free: then upd takes them (token + 1) and ins creates the rows of
//     the new keys with token 1, in key order. A new key whose row
//     another session created meanwhile makes the insert fail with a
//     unique violation, which undoes the whole statement.
//   - The answer is one row: the tokens won, in the order of the keys
//     ('{}' when nothing was taken), and the first busy row (NULLs when
//     none). Nothing taken and nothing busy means the statement lost a
//     race it could not see.
//
// Parameters: $1 keys (sorted), $2 owners, $3 ttl in microseconds.
func acquireAllSQL(table string) string {
	const expiry = `statement_timestamp() + $3::bigint * interval '1 microsecond'`
	return `WITH k AS (
	SELECT * FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k (key, owner, i)
),
cur AS MATERIALIZED (
	SELECT key, owner, token, expires_at FROM ` + table + ` WHERE key = ANY ($1::text[])
),
busy AS MATERIALIZED (
	SELECT key, owner, token, expires_at FROM cur
	WHERE NOT coalesce(owner IS NOT NULL AND token > 0
		AND (expires_at IS NULL OR (isfinite(expires_at) AND expires_at <= statement_timestamp())), false)
),
lck AS MATERIALIZED (
	SELECT key FROM ` + table + `
	WHERE key = ANY ($1::text[]) AND NOT EXISTS (SELECT FROM busy)
		AND owner IS NOT NULL AND token > 0
		AND (expires_at IS NULL OR (isfinite(expires_at) AND expires_at <= statement_timestamp()))
	ORDER BY key
	FOR UPDATE SKIP LOCKED
),
ok AS MATERIALIZED (
	SELECT NOT EXISTS (SELECT FROM busy) AND (SELECT count(*) FROM lck) = (SELECT count(*) FROM cur) AS go
),
upd AS (
	UPDATE ` + table + ` AS t SET owner = k.owner, token = t.token + 1, expires_at = ` + expiry + `
	FROM lck JOIN k ON k.key = lck.key
	WHERE t.key = lck.key AND (SELECT go FROM ok)
	RETURNING t.key, t.token
),
ins AS (
	INSERT INTO ` + table + ` (key, owner, token, expires_at)
	SELECT k.key, k.owner, 1, ` + expiry + ` FROM k
	WHERE (SELECT go FROM ok) AND NOT EXISTS (SELECT FROM cur WHERE cur.key = k.key)
	ORDER BY k.key
	RETURNING key, token
)
SELECT coalesce((SELECT array_agg(w.token ORDER BY k.i)
		FROM k JOIN (SELECT key, token FROM upd UNION ALL SELECT key, token FROM ins) AS w ON w.key = k.key), '{}'),
	b.key, b.owner, b.token, b.expires_at, statement_timestamp()
FROM (SELECT) AS one LEFT JOIN LATERAL (SELECT * FROM busy ORDER BY key LIMIT 1) AS b ON true`
}

// AcquireAll implements driver.MultiAcquirer: one statement (see
// acquireAllSQL) takes every key, or none when any is held, and then
// reports the first held key in a *fence.HeldError as Acquire does (a
// malformed row in a *fence.CorruptError). When the statement lost a
// race it could not see (a row taken or created by another session
// after its snapshot), it returns driver.ErrAcquireRaced and the
// portable layer runs it once more. More than 1000 keys are refused
// with an error matching errors.ErrUnsupported.
func (d *store) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	if len(keys) > maxAcquireAll {
		return nil, fmt.Errorf("%d keys in one statement, more than %d: %w", len(keys), maxAcquireAll, errors.ErrUnsupported)
	}
	var (
		tokens    []int64
		busyKey   pgtype.Text
		curOwner  pgtype.Text
		curToken  pgtype.Int8
		curExpiry pgtype.Timestamptz
		serverNow time.Time
	)
	sent := d.clock.Now()
	err := d.db.queryRow(ctx, d.q.acquireAll, keys, owners, micros(ttl)).
		Scan(&tokens, &busyKey, &curOwner, &curToken, &curExpiry, &serverNow)
	switch {
	case sqlState(err) == codeUniqueViolation:
		return nil, driver.ErrAcquireRaced // a new key's row was created meanwhile
	case err != nil:
		return nil, storeErr(err)
	}
	if len(tokens) == len(keys) {
		leases := make([]fence.Lease, len(keys))
		for i, t := range tokens {
			lease, err := d.won(keys[i], owners[i], ttl, t)
			if err != nil {
				return nil, err
			}
			leases[i] = lease
		}
		return leases, nil
	}
	if len(tokens) != 0 {
		return nil, fmt.Errorf("the statement issued %d tokens for %d keys", len(tokens), len(keys))
	}
	if !busyKey.Valid {
		return nil, driver.ErrAcquireRaced // free in the snapshot, taken or locked since
	}
	key := busyKey.String
	r, err := checkRow(key, curOwner, curToken, curExpiry)
	if err != nil {
		return nil, err
	}
	if !r.heldAt(serverNow) {
		return nil, driver.ErrAcquireRaced
	}
	return nil, &fence.HeldError{Key: key, Owner: r.owner, Token: r.token, ValidUntil: localTime(sent, r.expires, serverNow)}
}
