// Package sql fences writes to SQL databases: a write carrying token t is
// applied only if t is at least the highest token seen for its resource,
// and the check and the write commit or roll back together, in the
// caller's own transaction. It works with database/sql (PostgreSQL through
// github.com/jackc/pgx/v5/stdlib, SQLite through modernc.org/sqlite,
// MySQL and MariaDB through github.com/go-sql-driver/mysql) and with
// native pgx transactions. The Dialect names the database; see the
// section on MySQL below for what differs there.
//
// Its name clashes with database/sql; import it under an alias:
//
//	import fencesql "github.com/fencekit/fence/resources/sql"
//
// # Fence rows
//
// A fence table holds one row per resource key with the highest token
// accepted for it (see Tables and CreateTables). Fences.Check, called in
// the transaction that does the write, upserts that row in one conditional
// statement: it raises the token when the caller's is not lower and
// otherwise returns a *fence.StaleTokenError. The row stays locked until
// the transaction ends, so a concurrent writer of the same key waits and
// then sees the committed token. Deleting the protected data leaves the
// fence row, so the high-water mark outlives it. Fences.Highest reads the
// token of a key.
//
// Two rules make this safe, and the package cannot enforce them for you:
//
//   - Call Check in the same transaction as the write it protects, before
//     the write, never in a transaction of its own.
//   - When Check returns an error, roll the transaction back. RunTx and
//     RunPgxTx do both: they roll back whenever the function returns an
//     error, and retry the whole transaction on serialization failures,
//     deadlocks and SQLITE_BUSY.
//
// Under READ COMMITTED (PostgreSQL's default) a writer that waited on the
// row lock re-evaluates the condition against the committed row. Under
// REPEATABLE READ and SERIALIZABLE it fails with SQLSTATE 40001 instead,
// and the whole transaction must run again: use RunTx or RunPgxTx.
//
// # One call under a lease
//
// Fences.LockedPgx is the shortest correct program for a fenced write: it
// takes a lock through a fence.Session, begins a transaction whose first
// statement is the fence with the lease's token (sent with BEGIN in one
// batch, so it costs no round trip of its own), runs the caller's
// function in it, commits and releases the lock:
//
//	err := fences.LockedPgx(ctx, sess, pool, "account:alice", func(ctx context.Context, tx pgx.Tx) error {
//		_, err := tx.Exec(ctx, "UPDATE accounts SET balance = balance + 25 WHERE id = 'alice'")
//		return err
//	}, nil)
//
// The function's context is cancelled when the lease is lost, and the
// transaction then rolls back. The result tells the cases apart:
// fence.ErrHeld (the key was busy, nothing ran), fence.ErrLeaseLost (lost
// before the commit, rolled back), fence.ErrStaleToken (a newer holder
// has passed the fence, rolled back), fence.ErrUnknownOutcome (the
// COMMIT's answer was lost), the function's own error (rolled back), nil
// (committed). Fences.RunPgx does the same under a handle the caller
// holds, for many transactions under one lease; Locked and Run are the
// database/sql forms, with the fence as a statement of its own. RunOptions
// name a finer fence row under the key, the transaction's options and
// the wait for a busy key.
//
// # Pipelined fence (pgx)
//
// Fences.QueueCheck puts the fence first in the caller's pgx.Batch. When the
// token is stale the statement raises an error, so the server skips every
// later statement of the batch and the transaction can only roll back; the
// fence costs no round trip of its own.
//
// # Claims
//
// In a transaction, checking the fence first (Check, CheckPgx, and Run,
// RunPgx, Locked and LockedPgx, which do it before fn) is the claim of
// fence.Resource.Claim: from then on no write with a lower token can land
// until the transaction ends, so what fn reads it may write back without
// losing a stale holder's acknowledged write. Resource.Claim does the
// same in a transaction of its own, and sets the value row's token.
//
// # Fenced columns
//
// Column keeps the token on the protected row itself, in a column declared
// as
//
//	fence bigint NOT NULL DEFAULT 0 CHECK (fence >= 0)
//
// (see ColumnDefinition), and Column.Update runs
// UPDATE t SET <your assignments>, fence = $t WHERE key = $k AND fence <= $t,
// telling a stale token from a missing row. A hard DELETE of such a row
// loses its mark: a stale writer could then re-create the row. Soft-delete
// such rows with an Update (a deleted flag), or keep a fence row for them
// with Fences, which survives the delete.
//
// # Portable form
//
// Resource is a fence.Resource over a value table and a fence table, one
// transaction per call. Like every backend it is a driver behind
// fence.Resource: the portable layer validates keys and tokens
// (at most MaxToken), checks the context and wraps every error ("fence/sql:
// put "k": ..."); the driver here keeps the two statements of a write in
// one transaction, and the read-back that settles a write whose COMMIT
// answer was lost (see Resource). It passes resources/resourcetest on
// PostgreSQL (database/sql and pgx), SQLite and MariaDB 10.11.
//
// The native calls above (Fences, Column, CreateTables, RunTx) are not
// behind the portable layer: they validate their own input and report
// errors in the same style, a *fence.OpError of backend "sql" ("fence/sql:
// check "account/42": stale token 6 ...") around the contract's error, so
// errors.Is and errors.As see through it. A missing fence or value table
// gets an error matching fence.ErrStoreMissing.
//
// # URLs
//
// Importing the package registers the resource URL schemes postgres,
// postgresql, sqlite and mysql with fence.OpenResource:
//
//	postgres://[USER@]HOST[:PORT]/DB[?fence-table=T&value-table=V&PGX-PARAMS]
//	sqlite:///ABSOLUTE/PATH.db[?fence-table=T&value-table=V&busy-timeout=D]
//	sqlite://RELATIVE/PATH.db[?...]
//	mysql://[USER[:PASSWORD]@]HOST[:PORT]/DB[?fence-table=T&value-table=V&DRIVER-PARAMS]
//
// fence-table and value-table name the tables (Tables.Fence and
// Tables.Value, "table" or "schema.table"; default DefaultFenceTable and
// DefaultValueTable). A PostgreSQL URL is otherwise a pgx connection
// string: its other parameters are connection parameters of libpq or pgx
// (sslmode, pool_max_conns, ...), which go to pgxpool; another name is
// refused, and a server setting goes in options=-c NAME=VALUE. Credentials come from PG* environment variables and
// ~/.pgpass as pgx reads them (a password in the URL works, but shows in
// ps). An SQLite file is opened with modernc.org/sqlite (which the package
// imports for this) as the section on SQLite below advises: WAL mode,
// write transactions that lock when they begin, and a busy timeout of
// busy-timeout (default DefaultBusyTimeout). The driver's
// Create (r.Driver().(interface{ Create(context.Context) error })) creates
// the tables; Close closes the pool or the database. A MySQL URL's other
// parameters are go-sql-driver/mysql's DSN parameters (tls, timeout,
// interpolateParams, ...). See PostgresURLOpener, SQLiteURLOpener and
// MySQLURLOpener.
//
// # The stored records
//
// The fence table (DefaultFenceTable, "fence_tokens") has one row per
// key, never deleted by the package:
//
//	key    text, the resource key, primary key, not empty
//	token  bigint, the highest token accepted for the key, 1 to MaxToken
//
// Resource's value table (DefaultValueTable, "fence_values") has the
// columns key (primary key), value (bytea; BLOB in SQLite) and
// token, the token of the write that stored the value, at most the fence
// row's. A Resource tombstone is a fence row without a value row. A
// fenced column holds the token of the last write to its row, 0 when no
// fenced write has touched it. Inspect them with plain SELECTs. A repaired row must keep its token
// at least the highest token any holder may still write with: lowering a
// token, or deleting a fence row (or a fenced row), lets a stale writer
// through. A token that is NULL, not positive or (in SQLite) not an
// integer is reported with fence.ErrCorrupt and not written over.
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
// (RunTx retries the ones that still do).
//
// # MySQL and MariaDB
//
// Pass MySQL to NewResource, SchemaSQL, CreateTables, NewFencesFor,
// NewColumnFor and ColumnDefinitionFor. Tested on MariaDB 10.11;
// MariaDB 10.5 and later and MySQL 8.0.16 and later are meant to work,
// but no MySQL server runs in the tests here, so MySQL 8 is unverified.
// What differs:
//
//   - Names are quoted with backquotes, at most MaxMySQLIdentLen (64)
//     bytes; "db.table" names a table of another database. Statements
//     take ? placeholders, and so do Column's SET clauses, exactly one
//     per argument (a # comment or a $ is refused there too).
//   - The tables are InnoDB; keys are VARBINARY(1024), so MaxKeyLen is
//     the same as in the other dialects and keys compare byte for byte
//     (a utf8mb4 column would fold case and ignore trailing spaces, and
//     1024 such characters exceed InnoDB's 3072-byte index limit);
//     values are LONGBLOB, limited by the server's max_allowed_packet.
//     Each CREATE TABLE commits on its own, as MySQL's DDL does.
//   - Fences.Check is two statements: INSERT .. ON DUPLICATE KEY UPDATE
//     with one conditional assignment (so the left-to-right order in
//     which MySQL runs assignments, each seeing the ones before it,
//     cannot matter), then SELECT .. FOR UPDATE of the token. Neither
//     MySQL 8's missing RETURNING nor the affected-rows count (0 for a
//     refused token and for the same token written again alike) is
//     relied on, and the locking read sees the latest committed token
//     under InnoDB's default REPEATABLE READ, where a plain SELECT reads
//     the transaction's snapshot and would admit a stale token.
//     VALUES() is deprecated from MySQL 8.0.20 (row aliases replace it)
//     but still accepted; MariaDB has no row aliases.
//   - Column.Update does not trust the affected-rows count either:
//     MySQL counts changed rows unless the client sets
//     CLIENT_FOUND_ROWS, so a rewrite of the same values with the same
//     token reports 0. A zero count is settled by a locking read of the
//     row's token and, when it passed, the update again, which then
//     matches the locked row.
//   - RunTx retries ER_LOCK_DEADLOCK (1213), ER_LOCK_WAIT_TIMEOUT (1205)
//     and MariaDB's ER_CHECKREAD (1020); ER_NO_SUCH_TABLE (1146) and
//     ER_BAD_DB_ERROR (1049) match fence.ErrStoreMissing; ER_PARSE_ERROR
//     (1064) in Column.Update is the caller's SET clause.
//   - Only the database/sql calls exist (Check, Highest, Run, Locked,
//     Update); the pgx ones refuse a MySQL Fences or Column with
//     fence.ErrInvalid. Run's fence is its own statement pair, two
//     round trips (four with the driver's server-side prepared
//     statements; set interpolateParams=true to send each in one).
//
// # Tests
//
// The tests need no emulator: they run on a private PostgreSQL server
// that scripts/services.sh starts on 127.0.0.1 and names in
// FENCE_POSTGRES_URL (postgres://postgres@127.0.0.1:PORT/fence?sslmode=disable),
// on SQLite files in temporary directories, and on the MariaDB server
// that scripts/sqlzk.sh starts and names in FENCE_MYSQL_DSN.
package sql
