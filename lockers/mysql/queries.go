package mysql

// The statements, built once per store around the quoted table name.
//
// Time on the server is UTC_TIMESTAMP(6): the time the statement started,
// one value for the whole statement (MySQL and MariaDB fix it at the start
// of each statement), so every part of a statement judges expiry at the
// same instant, and it does not depend on the session's time_zone. A
// statement that waits for a row lock judges with its start time: an
// Acquire may then see as held a lease that ran out while it waited (it
// loses), never the other way round.
//
// The statements' outcomes travel in the OK packet's last-insert id,
// which LAST_INSERT_ID(expr) sets: the server sends it with the answer of
// the statement itself, however the connection's flags make it count
// affected rows (clientFoundRows or not).
type queries struct {
	acquire, acquireReturning, renew, release, brk, inspect string
	inspectValue, publish, hasValue, addValue               string
}

// free is the condition under which Acquire takes an existing row: it is
// well-formed (an owner, a positive token, an expiry within the years the
// locker writes) and free or expired. It reads token, owner and
// expires_at, and stays true (or false) after Acquire's assignments to
// token (token + 1 is positive when token is) and owner (the new owner is
// not empty), so it can be evaluated again in each assignment; expires_at
// is assigned last.
const free = `(token > 0 AND owner <> '' AND (expires_at IS NULL OR
		(expires_at >= '1970-01-01' AND expires_at <= UTC_TIMESTAMP(6))))`

// rowColumns are the columns Inspect and Acquire's RETURNING read: owner,
// token, whether the key is free, the microseconds left on the server,
// and whether the expiry lies outside the years the locker writes.
const rowColumns = `owner, token, expires_at IS NULL,
	TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at),
	(expires_at < '1970-01-01' OR expires_at >= '9999-01-01')`

func buildQueries(table string) queries {
	// acquire inserts a new key with token 1, or takes a free or expired
	// row, incrementing its token; a held (or corrupt) row keeps every
	// column. LAST_INSERT_ID is set to the new token when the statement
	// takes the key, and to 0 when it does not: the VALUES row sets it to
	// 1 before the server knows whether the key exists, and the
	// assignment to token sets it again on a duplicate key. IF()
	// evaluates only the branch it picks; the losing branch keeps token
	// as it is (NULL or negative in a corrupt row: arithmetic with the
	// unsigned LAST_INSERT_ID would fail on a negative one).
	// Parameters: key, owner, ttl in microseconds.
	acquire := `INSERT INTO ` + table + " (`key`, owner, token, expires_at)" + `
VALUES (?, ?, LAST_INSERT_ID(1), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE
	token = IF(` + free + `, LAST_INSERT_ID(token + 1), IF(LAST_INSERT_ID(0) = 0, token, token)),
	owner = IF(` + free + `, VALUES(owner), owner),
	expires_at = IF(` + free + `, VALUES(expires_at), expires_at)`
	return queries{
		acquire: acquire,
		// acquireReturning is acquire returning the row as it is after
		// the statement, with LAST_INSERT_ID(): the token won, or 0.
		// MariaDB only (INSERT .. RETURNING, 10.5 and later).
		acquireReturning: acquire + `
RETURNING LAST_INSERT_ID(), ` + rowColumns,

		// renew extends the caller's own unexpired lease, keeping the
		// token; LAST_INSERT_ID is the token when the row matched, and
		// 0 (unset) otherwise.
		// Parameters: ttl in microseconds, key, owner, token.
		renew: `UPDATE ` + table + `
SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, token = LAST_INSERT_ID(token)
WHERE ` + "`key`" + ` = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6)`,

		// release frees the caller's own unexpired lease (compare and
		// free); the row and its counter stay. LAST_INSERT_ID as renew.
		// Parameters: key, owner, token.
		release: `UPDATE ` + table + `
SET expires_at = NULL, token = LAST_INSERT_ID(token)
WHERE ` + "`key`" + ` = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6)`,

		// brk frees the key whoever holds it; the counter stays, so the
		// next token is higher than the broken holder's.
		// Parameter: key.
		brk: `UPDATE ` + table + " SET expires_at = NULL WHERE `key` = ? AND expires_at IS NOT NULL",

		// inspect reads the row, judged by the server's clock.
		// Parameter: key.
		inspect: `SELECT ` + rowColumns + ` FROM ` + table + " WHERE `key` = ?",

		// inspectValue is inspect with the value published with the
		// row's token (NULL: none), on a table that has the value
		// columns (see schemaSQL). Parameter: key.
		inspectValue: `SELECT ` + rowColumns + `, IF(value_token = token, value, NULL) FROM ` + table + " WHERE `key` = ?",

		// publish sets the value of the caller's own unexpired lease
		// (NULL: none), with the lease's token beside it; LAST_INSERT_ID
		// as renew. Parameters: value, key, owner, token.
		publish: `UPDATE ` + table + `
SET value = ?, value_token = token, token = LAST_INSERT_ID(token)
WHERE ` + "`key`" + ` = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6)`,

		// hasValue fails with ER_BAD_FIELD_ERROR on a table made
		// without the value columns, which addValue adds.
		hasValue: `SELECT value, value_token FROM ` + table + ` LIMIT 0`,
		addValue: `ALTER TABLE ` + table + ` ADD COLUMN value VARBINARY(512) NULL, ADD COLUMN value_token BIGINT NULL`,
	}
}
