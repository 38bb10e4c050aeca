// Package sql fences writes to SQL databases: a write carrying token t is
// applied only if t is at least the highest token seen for its resource,
// and the check and the write commit or roll back together, in the
// caller's own transaction.
//
// Its name clashes with database/sql; import it under an alias:
//
//	import fencesql "github.com/fencekit/fence/resources/sql"
//
// One type, Fences, serves every database and driver. The database and
// its dialect are bound once, when it is made:
//
//	fences, err := fencesql.NewPgx(pool, nil)                // PostgreSQL through native pgx
//	fences, err := fencesql.New(db, fencesql.SQLite, nil)    // database/sql: PostgreSQL, SQLite or MySQL
//
// The two have the same methods; their type parameter is the transaction
// type of the driver, pgx.Tx or *sql.Tx, which the caller's functions
// receive as they are, with every feature of their driver. A program
// that uses pgx links neither SQLite nor the MySQL driver.
//
// # Under a lease
//
// Fences.Run runs a fenced transaction under a lock the application holds
// through its fence.Session: the transaction's first statement is the
// fence with the lease's token (with pgx, sent with BEGIN in one batch, so
// it costs no round trip of its own), then the caller's function runs in
// it, and the transaction commits:
//
//	h, err := sess.Lock(ctx, "account:alice", nil) // or Run inside guard.Run
//	...
//	defer h.Release(ctx)
//	err = fences.Run(ctx, h, func(ctx context.Context, tx pgx.Tx) error {
//		_, err := tx.Exec(ctx, "UPDATE accounts SET balance = balance + 25 WHERE id = 'alice'")
//		return err
//	}, nil)
//
// The function's context is cancelled when the lease is lost, and the
// transaction then rolls back. The result tells the cases apart:
// fence.ErrLeaseLost (lost before the commit, rolled back),
// fence.ErrStaleToken (a newer holder has passed the fence, rolled back),
// fence.ErrUnknownOutcome (the COMMIT's answer was lost), the function's
// own error (rolled back), nil (committed). Serialization failures,
// deadlocks and SQLITE_BUSY run the whole transaction again.
//
// Fences.RunAll does the same under several locks taken together with
// Session.LockAll: one transaction passes each key's fence with its own
// lock's token, in key order, and then runs the function, so a transfer
// between two accounts commits both writes or neither, and is refused as
// a whole when a newer holder of either account has passed its fence:
//
//	hs, err := sess.LockAll(ctx, []string{"account:alice", "account:bob"}, nil)
//	...
//	err = fences.RunAll(ctx, hs, func(ctx context.Context, tx pgx.Tx) error {
//		... debit alice, credit bob ...
//	})
//
// # In your own transaction
//
// A fence table holds one row per resource key with the highest token
// accepted for it. Fences.Check, called in the transaction that does the
// write, upserts that row in one conditional statement: it raises the
// token when the caller's is not lower and otherwise returns a
// *fence.StaleTokenError. The row stays locked until the transaction ends,
// so a concurrent writer of the same key waits and then sees the
// committed token. Deleting the protected data leaves the fence row, so
// the high-water mark outlives it. Two rules make this safe, and the
// package cannot enforce them for you:
//
//   - Call Check in the same transaction as the write it protects, before
//     the write, never in a transaction of its own.
//   - When Check returns an error, roll the transaction back.
//
// Run does both. Under READ COMMITTED (PostgreSQL's default) a writer
// that waited on the row lock re-evaluates the condition against the
// committed row. Under REPEATABLE READ and SERIALIZABLE it fails with
// SQLSTATE 40001 instead, and the whole transaction must run again:
// Retryable tells such conflicts.
//
// # Claims
//
// In a transaction, checking the fence first (Check, and Run, which does
// it before the function) is the claim of fence.Resource.Claim: from then
// on no write with a lower token can land until the transaction ends, so
// what the transaction reads it may write back without losing a stale
// holder's acknowledged write.
//
// # Fenced columns
//
// Column keeps the token on the protected row itself, in a column declared
// as Column.Definition says,
//
//	fence bigint NOT NULL DEFAULT 0 CHECK (fence >= 0)
//
// and Column.Update runs
// UPDATE t SET <your assignments>, fence = $t WHERE key = $k AND fence <= $t,
// telling a stale token from a missing row. A hard DELETE of such a row
// loses its mark: a stale writer could then re-create the row. Soft-delete
// such rows with an Update (a deleted flag), or keep a fence row for them
// with Check, which survives the delete.
//
// # Portable form
//
// Fences.Resource is the *fence.Resource over a value table and the fence
// table. The portable layer validates keys and tokens (at most MaxToken),
// checks the context and wraps every error ("fence/sql: put "k": ...");
// the driver here keeps the two statements of a write in one transaction,
// and the read-back that settles a write whose COMMIT answer was lost. It
// passes resources/resourcetest on PostgreSQL (database/sql and pgx),
// SQLite and MariaDB 10.11. Its As gives the Fences it came from (target
// a **Fences[pgx.Tx] or **Fences[*sql.Tx]) and the database: a **sql.DB,
// or a *PgxDB and, for a pool, a **pgxpool.Pool.
//
// The other calls validate their own input and report errors in the same
// style, a *fence.OpError of backend "sql" ("fence/sql: check
// "account/42": stale token 6 ...") around the contract's error, so
// errors.Is and errors.As see through it. A missing fence or value table
// gets an error matching fence.ErrStoreMissing.
//
// # URLs
//
// Importing the package registers the resource URL schemes postgres and
// postgresql with fence.OpenResource:
//
//	postgres://[USER@]HOST[:PORT]/DB[?fence-table=T&value-table=V&PGX-PARAMS]
//
// fence-table and value-table name the tables (Options.FenceTable and
// Options.ValueTable, "table" or "schema.table"). The URL is otherwise a
// pgx connection string: its other parameters are connection parameters
// of libpq or pgx (sslmode, pool_max_conns, ...), which go to pgxpool;
// another name is refused, and a server setting goes in options=-c
// NAME=VALUE. Credentials come from PG* environment variables and
// ~/.pgpass as pgx reads them (a password in the URL works, but shows in
// ps). The Resource runs on a pgxpool.Pool that its Close closes; its
// Create creates the tables. The sqlite:// and mysql:// schemes are
// registered by the subpackages sqlite and mysql, which import (and so
// link) their drivers; the package backends imports both.
//
// # The stored records
//
// The fence table (default "fence_tokens") has one row per key, never
// deleted by the package:
//
//	key    text, the resource key, primary key, not empty
//	token  bigint, the highest token accepted for the key, 1 to MaxToken
//
// The value table of Resource (default "fence_values") has the columns
// key (primary key), value (bytea; BLOB in SQLite) and token, the token of
// the write that stored the value, at most the fence row's. A tombstone is
// a fence row without a value row. A fenced column holds the token of the
// last write to its row, 0 when no fenced write has touched it. Inspect
// them with plain SELECTs (Fences.SchemaSQL gives the statements that
// create them). A repaired row must keep its token at least the highest
// token any holder may still write with: lowering a token, or deleting a
// fence row (or a fenced row), lets a stale writer through. A token that
// is NULL, not positive or (in SQLite) not an integer is reported with
// fence.ErrCorrupt and not written over.
//
// # Tokens and SQLite
//
// Tokens are stored as signed 64-bit integers (bigint), so a token above
// MaxToken (math.MaxInt64) is refused with fence.ErrInvalid. With SQLite,
// open the database in WAL mode with a busy timeout, for example
//
//	file:/path/db.sqlite?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate
//
// so that writers wait for each other instead of failing with SQLITE_BUSY
// (Run and Resource retry the ones that still do).
//
// # MySQL and MariaDB
//
// Pass MySQL to New, with a *sql.DB of github.com/go-sql-driver/mysql.
// Tested on MariaDB 10.11; MariaDB 10.5 and later and MySQL 8.0.16 and
// later are meant to work, but no MySQL server runs in the tests here, so
// MySQL 8 is unverified. What differs:
//
//   - Names are quoted with backquotes, at most 64 bytes (63 elsewhere);
//     "db.table" names a table of another database. Statements take ?
//     placeholders, and so do Column's SET clauses, exactly one per
//     argument (a # comment or a $ is refused there too).
//   - The tables are InnoDB; keys are VARBINARY(1024), so MaxKeyLen is the
//     same as in the other dialects and keys compare byte for byte (a
//     utf8mb4 column would fold case and ignore trailing spaces, and 1024
//     such characters exceed InnoDB's 3072-byte index limit); values are
//     LONGBLOB, limited by the server's max_allowed_packet. Each CREATE
//     TABLE commits on its own, as MySQL's DDL does.
//   - Check is two statements: INSERT .. ON DUPLICATE KEY UPDATE with one
//     conditional assignment (so the left-to-right order in which MySQL
//     runs assignments, each seeing the ones before it, cannot matter),
//     then SELECT .. FOR UPDATE of the token. Neither MySQL 8's missing
//     RETURNING nor the affected-rows count (0 for a refused token and
//     for the same token written again alike) is relied on, and the
//     locking read sees the latest committed token under InnoDB's default
//     REPEATABLE READ, where a plain SELECT reads the transaction's
//     snapshot and would admit a stale token. VALUES() is deprecated from
//     MySQL 8.0.20 (row aliases replace it) but still accepted; MariaDB
//     has no row aliases.
//   - Column.Update does not trust the affected-rows count either: MySQL
//     counts changed rows unless the client sets CLIENT_FOUND_ROWS, so a
//     rewrite of the same values with the same token reports 0. A zero
//     count is settled by a locking read of the row's token and, when it
//     passed, the update again, which then matches the locked row.
//   - ER_LOCK_DEADLOCK (1213), ER_LOCK_WAIT_TIMEOUT (1205) and MariaDB's
//     ER_CHECKREAD (1020) are Retryable; ER_NO_SUCH_TABLE (1146) and
//     ER_BAD_DB_ERROR (1049) match fence.ErrStoreMissing; ER_PARSE_ERROR
//     (1064) in Column.Update is the caller's SET clause.
//   - Run's fence is its own statement pair, two round trips (four with
//     the driver's server-side prepared statements; set
//     interpolateParams=true to send each in one).
package sql
