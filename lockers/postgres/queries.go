package postgres

// The statements, built once per store around the quoted table name.
//
// Time on the server is statement_timestamp(): the time the server
// received the statement. It is one value for the whole statement, so
// every part of the acquire statement judges expiry at the same instant
// (clock_timestamp() would move while the statement runs, for example
// while it waits for a row lock). Unlike now(), the start of the
// transaction, it does not go stale when DB is a pgx.Tx. And it is never
// earlier than the moment the caller sent the statement, so an expiry of
// statement_timestamp() + ttl is never earlier than the caller's estimate
// of send time + ttl (Lease.ValidUntil): the caller's view is conservative.
//
// TTLs travel as whole microseconds ($ttl_us, rounded up) and remaining
// times come back as server expiry and server time, which the caller turns
// into its own clock's time (see localTime).
type queries struct {
	acquire, acquireNew, acquireAll, renew, renewBatch, release, brk, inspect, publish string
}

func buildQueries(table string) queries {
	names := notifyNamesOf(table)
	notify := notifyExpr(names, "$4", "$5")
	return queries{
		// acquire takes an existing key, writing only if it wins.
		//
		//   - upd takes a free or expired (and well-formed) row: a
		//     conditional UPDATE locks and writes only a row that matches,
		//     so a held key costs a read and nothing else. If another
		//     session changes the row first, PostgreSQL waits for it and
		//     re-checks the condition on the new version (READ COMMITTED),
		//     so two contenders never both win.
		//   - When upd took the row, the statement returns its new token;
		//     otherwise the row as the statement's snapshot saw it (the
		//     holder, or a corrupt row), and no row at all when the key is
		//     new: Acquire then sends acquireNew. The read of the row is
		//     skipped when upd won (NOT EXISTS is evaluated once, first).
		//
		// When upd did not win and the snapshot shows a free key, the
		// statement lost a race it could not see (the row changed after
		// the snapshot was taken); Acquire then runs it once more with a
		// fresh snapshot.
		// Parameters: $1 key, $2 owner, $3 ttl in microseconds.
		acquire: `WITH upd AS (
	UPDATE ` + table + ` SET owner = $2, token = token + 1,
		expires_at = statement_timestamp() + $3::bigint * interval '1 microsecond'
	WHERE key = $1 AND owner IS NOT NULL AND token > 0
		AND (expires_at IS NULL OR (isfinite(expires_at) AND expires_at <= statement_timestamp()))
	RETURNING token
)
SELECT token, NULL::text, NULL::bigint, NULL::timestamptz, statement_timestamp() FROM upd
UNION ALL
SELECT NULL, owner, token, expires_at, statement_timestamp() FROM ` + table + `
WHERE key = $1 AND NOT EXISTS (SELECT FROM upd)`,

		// acquireNew creates the row of a key seen for the first time,
		// with token 1, and returns the token; nothing when a concurrent
		// first acquire created it first (ON CONFLICT DO NOTHING).
		// Parameters: $1 key, $2 owner, $3 ttl in microseconds.
		acquireNew: `INSERT INTO ` + table + ` (key, owner, token, expires_at)
VALUES ($1, $2, 1, statement_timestamp() + $3::bigint * interval '1 microsecond')
ON CONFLICT (key) DO NOTHING
RETURNING token`,

		// renew extends the caller's own unexpired lease, keeping the token.
		// Parameters: $1 key, $2 owner, $3 token, $4 ttl in microseconds.
		renew: `UPDATE ` + table + `
SET expires_at = statement_timestamp() + $4::bigint * interval '1 microsecond'
WHERE key = $1 AND owner = $2 AND token = $3 AND expires_at > statement_timestamp()`,

		// renewBatch is renew for many leases at once, each with its own
		// TTL: the leases travel as four arrays, joined to the table by
		// key, and the statement returns the positions (1-based) of the
		// leases it extended, aggregated into one row. A row is locked
		// only when it matches a lease of the batch, which only its
		// holder can send, so two batches never wait for each other.
		// The leases must be distinct: UPDATE .. FROM updates a row once
		// even when several source rows match it, and returns only one.
		// Parameters: $1 keys, $2 owners, $3 tokens, $4 ttls in
		// microseconds.
		renewBatch: `WITH r AS (
	UPDATE ` + table + ` AS t
	SET expires_at = statement_timestamp() + b.ttl * interval '1 microsecond'
	FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) WITH ORDINALITY AS b (key, owner, token, ttl, i)
	WHERE t.key = b.key AND t.owner = b.owner AND t.token = b.token AND t.expires_at > statement_timestamp()
	RETURNING b.i
)
SELECT coalesce(array_agg(i), '{}') FROM r`,

		// release frees the caller's own unexpired lease (compare and free);
		// the row and its counter stay. When it frees the row, it notifies
		// the waiters of the key (see notifyExpr).
		// Parameters: $1 key, $2 owner, $3 token, $4 the key's
		// notification payload, $5 its probe slot.
		release: `UPDATE ` + table + ` SET expires_at = NULL
WHERE key = $1 AND owner = $2 AND token = $3 AND expires_at > statement_timestamp()
RETURNING ` + notify,

		// brk frees the key whoever holds it; the counter stays, so the
		// next token is higher than the broken holder's. A free key is
		// left untouched (nothing is written, nobody is notified).
		// Parameters: $1 key, $2 the key's notification payload, $3 its
		// probe slot.
		brk: `UPDATE ` + table + ` SET expires_at = NULL WHERE key = $1 AND expires_at IS NOT NULL
RETURNING ` + notifyExpr(names, "$2", "$3"),

		// inspect reads the row and the server's time, and the value
		// published with the row's current lease (NULL when none). The
		// value columns are read through to_jsonb of the row, so that the
		// statement also runs on a table made without them (see
		// schemaSQL), where it reads NULL.
		// Parameter: $1 key.
		inspect: `SELECT t.owner, t.token, t.expires_at, statement_timestamp(),
	CASE WHEN r->>'value_token' = t.token::text THEN r->>'value' END
FROM ` + table + ` AS t, to_jsonb(t) AS r WHERE t.key = $1`,

		// publish sets the value of the caller's own unexpired lease
		// (compare and set; empty clears), marking it with the lease's
		// token, and notifies the key's waiters as release does.
		// Parameters: $1 key, $2 owner, $3 token, $4 the value in
		// base64, $5 the key's notification payload, $6 its probe slot.
		publish: `UPDATE ` + table + ` SET value = NULLIF($4::text, ''), value_token = token
WHERE key = $1 AND owner = $2 AND token = $3 AND expires_at > statement_timestamp()
RETURNING ` + notifyExpr(names, "$5", "$6"),

		acquireAll: acquireAllSQL(table),
	}
}
