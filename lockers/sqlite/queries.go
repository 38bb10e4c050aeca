package sqlite

// queries are the statements of one lease table, each one statement that
// SQLite runs atomically in a transaction of its own. A writing
// statement takes the database's write lock when it starts, waiting for
// another writer's up to the connection's busy timeout.
type queries struct {
	create, hasValue, addValue, addValueToken               string
	acquire, read, renew, renewBatch, release, brk, publish string
	lockAll, takeAll                                        string
}

// maxToken is the largest token the table holds (SQLite's INTEGER).
const maxToken = 1<<63 - 1

// buildQueries returns the statements of the lease table table, quoted.
func buildQueries(table string) queries {
	return queries{
		// One row per key, never deleted: the owner of the current or
		// last lease, the last token issued, the expiry of the
		// current lease in Unix nanoseconds on the locker's Clock, NULL
		// while the key is free, and the value published with the lease
		// of token value_token (NULL: none).
		create: `CREATE TABLE IF NOT EXISTS ` + table + ` (
	key         TEXT    NOT NULL PRIMARY KEY,
	owner       TEXT    NOT NULL,
	token       INTEGER NOT NULL,
	expires     INTEGER,
	value       BLOB,
	value_token INTEGER
) STRICT, WITHOUT ROWID`,

		// hasValue counts the value columns of the table: 2, or 0 in a
		// table made by an earlier version, which addValue completes.
		hasValue:      `SELECT count(*) FROM pragma_table_info('` + table[1:len(table)-1] + `') WHERE name IN ('value', 'value_token')`,
		addValue:      `ALTER TABLE ` + table + ` ADD COLUMN value BLOB`,
		addValueToken: `ALTER TABLE ` + table + ` ADD COLUMN value_token INTEGER`,

		// publish sets the value of the caller's own unexpired lease
		// (empty: NULL), with the lease's token beside it.
		// Parameters: key, owner, token, now, value.
		publish: `UPDATE ` + table + ` SET value = ?5, value_token = token
WHERE key = ?1 AND owner = ?2 AND token = ?3 AND expires > ?4`,

		// lockAll reads the rows of a JSON array of keys, in key order,
		// in AcquireAll's transaction. Parameter: the keys.
		lockAll: `SELECT key, owner, token, expires FROM ` + table + `
WHERE key IN (SELECT value FROM json_each(?1)) ORDER BY key`,

		// takeAll takes every key of a JSON array of [key, owner] that
		// lockAll found free (or missing), in AcquireAll's transaction,
		// and returns each key with its new token.
		// Parameters: the array, the expiry.
		takeAll: `INSERT INTO ` + table + ` (key, owner, token, expires)
SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), 1, ?2 FROM json_each(?1) WHERE true
ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, token = token + 1, expires = excluded.expires
RETURNING key, token`,

		// acquire inserts the key's row with token 1, or takes a free or
		// expired well-formed row, adding one to its token; a held or
		// malformed row is left as it is and nothing is returned.
		// Parameters: key, owner, expiry, now.
		acquire: `INSERT INTO ` + table + ` (key, owner, token, expires) VALUES (?1, ?2, 1, ?3)
ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, token = token + 1, expires = excluded.expires
WHERE (expires IS NULL OR expires <= ?4) AND token >= 1 AND token < 9223372036854775807 AND owner <> ''
	AND (expires IS NULL OR expires > 0)
RETURNING token`,

		// read reads the key's row, with the value published with its
		// current token (NULL: none). Parameter: key.
		read: `SELECT owner, token, expires, CASE WHEN value_token = token THEN value END FROM ` + table + ` WHERE key = ?1`,

		// renew extends the caller's own unexpired lease.
		// Parameters: key, owner, token, now, new expiry.
		renew: `UPDATE ` + table + ` SET expires = ?5
WHERE key = ?1 AND owner = ?2 AND token = ?3 AND expires > ?4`,

		// renewBatch extends each lease of a JSON array of [key, owner,
		// token, TTL in nanoseconds] that its owner and token hold
		// unexpired, and returns the key, owner and token of each it
		// extended. Parameters: the array, now.
		renewBatch: `UPDATE ` + table + ` AS l SET expires = ?2 + json_extract(b.value, '$[3]')
FROM json_each(?1) AS b
WHERE l.key = json_extract(b.value, '$[0]') AND l.owner = json_extract(b.value, '$[1]')
	AND l.token = json_extract(b.value, '$[2]') AND l.expires > ?2
RETURNING key, owner, token`,

		// release frees the caller's own unexpired lease; the row and its
		// counter stay. Parameters: key, owner, token, now.
		release: `UPDATE ` + table + ` SET expires = NULL
WHERE key = ?1 AND owner = ?2 AND token = ?3 AND expires > ?4`,

		// brk frees the key whoever holds it; the counter stays.
		// Parameter: key.
		brk: `UPDATE ` + table + ` SET expires = NULL WHERE key = ?1 AND expires IS NOT NULL`,
	}
}
