// Package mysql keeps the leases of a fence.Locker in MySQL or MariaDB,
// driven through database/sql and github.com/go-sql-driver/mysql: New
// returns the *fence.Locker over a lease table. It also has GetLock, a
// helper for the server's named locks (GET_LOCK) that cannot leak a lock
// back into the connection pool; those locks issue no fencing token.
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence).
//
// # The lease table
//
// Each key is one row of an InnoDB table (DefaultTable, "fence_locks",
// unless Options.Table says otherwise; see SchemaSQL), with these columns:
//
//   - key VARBINARY(1024), the primary key: the lock key's bytes, compared
//     as bytes (no collation folds case or pads spaces).
//   - owner VARBINARY(1024) NOT NULL: the owner id of the current or last
//     lease.
//   - token BIGINT NOT NULL: the last token issued, 1 to 2^63-1. Acquire
//     sets it to token + 1 (1 for a new row); nothing else changes it.
//   - expires_at DATETIME(6): when the current lease ends, in UTC on the
//     server's clock (UTC_TIMESTAMP(6)), or NULL when the key is free
//     (released or broken).
//   - value VARBINARY(512) and value_token BIGINT: the value last
//     published with a lease (Locker.Publish; NULL when empty) and that
//     lease's token. Inspect reports the value only while the lease of
//     that token is held, so a new lease starts with none and Acquire,
//     Renew and Release never write these columns.
//
// A table made by an earlier version has no value columns: every call
// but Publish works on it (Inspect with a second statement), and
// Publish returns an error matching fence.ErrStoreMissing that says to
// run Create, which adds them (or AddValueSQL, for migration tools).
//
// Rows are never deleted: releasing or breaking a lease clears the expiry
// and keeps the counter, so the next token continues the sequence. Do not
// delete rows by hand; that restarts a key's tokens at 1. A key is held
// while expires_at > UTC_TIMESTAMP(6). To look:
//
//	SELECT `key`, owner, token, expires_at, expires_at > UTC_TIMESTAMP(6) AS held
//	FROM fence_locks WHERE `key` = 'k';
//
// To free a key by hand, do what Break does: UPDATE fence_locks SET
// expires_at = NULL WHERE `key` = 'k'. Never lower a token or delete a row.
// A row with an empty owner, a token below 1, or an expiry before 1970 or
// after 9998 (a zero date, say) is reported with a *fence.CorruptError
// and never written over by Acquire (NULL owners or tokens too, which the
// table allows only after it is altered).
//
// Keys are at most MaxKeyLen (1024) bytes: InnoDB's index limit is 3072
// bytes with 16 KB pages and 1536 with 8 KB pages (ROW_FORMAT=DYNAMIC, the
// default since MySQL 5.7 and MariaDB 10.2, which the DDL names).
//
// # The statements
//
// Every method is one statement in autocommit mode (see queries.go for the
// text), prepared on the server after its first call, so that each later
// call sends only its execution, one round trip (go-sql-driver would
// otherwise prepare, run and close it every time: two). Every outcome is
// read from that statement's own answer, never from its affected-rows
// count (which counts changed rows, so an identical rewrite, say a renewal
// within the same microsecond, would read as a failure) and never from a
// second statement.
//
//   - Acquire is one INSERT .. ON DUPLICATE KEY UPDATE. A new key is
//     inserted with token 1; an existing row is taken only when it is free
//     or expired (and well-formed). MySQL runs the assignments left to
//     right and each sees the values set before it, so the condition is
//     written to read the same after each assignment that precedes the
//     last (token, then owner, then expires_at, which the condition reads
//     last). The winner's token is passed through LAST_INSERT_ID(expr),
//     which the server returns in the statement's OK packet (0 when the
//     key was held): a failed Acquire changes nothing. On MariaDB (10.5
//     and later) the statement ends with RETURNING, so a failed Acquire
//     learns the holder in the same round trip; on MySQL, which has no
//     INSERT .. RETURNING, a failed Acquire reads the holder with a second
//     statement (Inspect's), and if that finds the key free it reports
//     driver.ErrAcquireRaced, which the portable layer retries once.
//   - Renew and Release are one conditional UPDATE each, matching key,
//     owner, token and an unexpired lease; each sets token =
//     LAST_INSERT_ID(token), so the OK packet carries the token exactly
//     when the row matched.
//   - Break is an UPDATE that clears the expiry of a held key; Inspect is
//     one SELECT.
//   - Publish is one conditional UPDATE, as Renew, that sets the value
//     and value_token.
//   - A fence.Session.LockAll of several keys is one transaction, all or
//     nothing, at the server's default isolation level: START
//     TRANSACTION, a SELECT .. FOR UPDATE of the keys' rows in key order
//     (locking reads see the latest rows), then, when none is held, one
//     INSERT of the new keys' rows and one UPDATE of the others, and
//     COMMIT; when a key is held it rolls back, having written nothing.
//     Four round trips for any number of keys (up to 10,000; larger sets
//     are taken one key at a time). Rows are locked in key order, so two
//     LockAll calls never deadlock on existing rows; on new keys,
//     InnoDB's gap locks (REPEATABLE READ) make two transactions that
//     create the same new key deadlock, and the server undoes one, which
//     is sent again (see Errors). A LockAll that meets a held key holds
//     its rows locked for one round trip, so a Renew or Acquire of those
//     keys may wait that long.
//   - A Session's keepalive renews all its due leases with one statement
//     (RenewBatch; up to 10,000 leases and 4 MB of keys and owners per
//     statement): an INSERT .. ON DUPLICATE KEY UPDATE of their rows that
//     extends only the rows whose owner, token and unexpired lease
//     match, RETURNING every row, from which each lease's outcome is
//     read. On MySQL, which has no INSERT .. RETURNING, it sends one
//     Renew per lease.
//
// Remaining times are computed on the server (TIMESTAMPDIFF(MICROSECOND,
// UTC_TIMESTAMP(6), expires_at)) and added to the local send time, so the
// caller's clock never meets the server's: skew does not matter, only
// clock rates do. TTLs travel as whole microseconds, rounded up.
//
// MySQL 8: the statements are verified on MariaDB 10.11 only; no MySQL
// server can be tested here. On MySQL 8 the locker uses the path without
// RETURNING (it asks the server's VERSION() once); VALUES() in ON
// DUPLICATE KEY UPDATE is deprecated there since 8.0.20 (it warns, and
// still works). Both are unverified on MySQL.
//
// # Guarantees, and what breaks them
//
// The token of a key grows by one at each acquisition and is never
// lowered, across release, expiry, Break and server restarts (InnoDB's
// commits are durable with the default innodb_flush_log_at_trx_commit=1;
// a setting of 0 or 2 can lose the last second of commits in a crash, and
// with them issued tokens). Acquire is one atomic statement: InnoDB locks
// the row (or the key's index gap) while it runs, so two contenders never
// both win.
//
// What breaks them:
//
//   - The server's clock decides expiry. A clock that jumps forward ends
//     leases early; one that runs fast shortens them. The local
//     ValidUntil is conservative only while both clocks run at the same
//     rate.
//   - A replica. Point the *sql.DB at the primary: a replica that lags
//     answers Inspect with an old row, and one promoted by an asynchronous
//     failover may have lost the last acquisitions, and will issue their
//     tokens again.
//   - Editing the table by hand (lowering a token, deleting a row).
//
// # Errors
//
// A deadlock (1213) or lock wait timeout (1205) undoes the whole
// statement, which is therefore retried, up to three times in all; after
// that the method returns a *ContentionError. A connection lost while a
// statement was in flight (the server killed it, the network failed, ctx
// ended) gets a *ConnLostError: the statement may have been applied, so
// it matches fence.ErrUnknownOutcome for every method but Inspect. After
// an ambiguous Acquire, Inspect the key (an Acquire with
// AcquireOptions.Owner set shows whether that owner got it) or let the
// lease expire; after an ambiguous Renew or Release, repeat it (both are
// idempotent: a Release that had landed answers fence.ErrNotHeld). A
// missing table gets an error matching fence.ErrStoreMissing.
//
// # Waking waiters
//
// A Session.Lock that waits on a busy key is woken when the holder
// releases it, through the server's named locks (GET_LOCK), which carry
// the wake-up only: the lease table alone decides who holds a key.
//
//   - While a Locker holds a lease, one connection of its own holds the
//     key's bell, the named lock "fence:" followed by 40 hex digits of a
//     SHA-256 of the table's name (as Options.Table gives it) and the key.
//     It takes the bell just after the Acquire that won the key, and
//     frees it just after the Release (or Break) that freed the row, or
//     once the lease has run out when it was never released. The
//     connection goes back to the pool when the Locker holds no lease.
//   - A Publish frees its lease's bell for an instant and takes it
//     again, which wakes the key's waiters as a release does (an
//     election's followers see the new value at once); waiters of the
//     same Locker are woken without the server. A Publish made before
//     the bell was taken (just after the Acquire) tolls it once it is
//     taken (not tested: the race is too narrow to provoke). A Publish
//     through a Locker that does not ring the lease's bell wakes only
//     its own.
//   - A waiter that found nobody holding the bell is woken when a later
//     look finds it held: a new lease on the key, whose value may have
//     been published before its bell was taken (an election's followers
//     see a new term and its value at once; tested: lockertest's
//     Publish/WakesWaiters).
//   - A waiting Lock holds a connection of its own that waits in GET_LOCK
//     on the bell and frees it in the same statement; the holder's
//     release (or its bell connection's end) wakes it, and Lock tries the
//     key at once.
//   - The wake-up is a hint. When the bell is missing (the holder's
//     Locker has the wake-ups off, runs an older version of this package,
//     or found the bell held for an instant by a waiter being woken and
//     gave up after eight tries, about a quarter of a second), the waiter
//     finds nobody holding it, looks again (IS_USED_LOCK, which takes
//     nothing) eight times 1 ms apart, eight times 2 ms apart, and so on
//     up to 250 ms, and otherwise polls as it would without bells
//     (SessionOptions.PollInterval, or the holder's expiry). A release
//     is never missed when the waiter saw the bell held (tested); a lease
//     held for less than a few milliseconds can end unseen, and then the
//     waiter polls.
//   - Cost: each lease sends two statements on the bell connection
//     (GET_LOCK when taken, RELEASE_LOCK when freed; no disk write, one
//     round trip each, off the caller's path). Measured on a 2-core
//     machine that also runs the server, an acquire+release took 1.12x
//     the hand-written statements with the bells and 1.08x without (see
//     BenchmarkVersusHandwritten).
//   - Connections: one per Locker while it holds leases, plus one per key
//     waited on, at most Options.WakeConns in all (DefaultWakeConns,
//     9); waiters beyond that poll. When db's pool has a limit
//     (SetMaxOpenConns) the wake-ups are off unless WakeConns is set,
//     since a connection held by a bell is one the statements cannot use.
//   - When the bell connection dies, the server frees its bells, which
//     wakes the waiters for nothing (they find the key still held and wait
//     again); the Locker notices within a second and takes the bells again
//     on a new connection. When a waiter's connection fails, it stops and
//     the waiter polls.
//
// Two Lockers that name the same table differently ("fence_locks" and
// "db.fence_locks") ring different bells, and their waiters poll; two
// tables of the same name in different databases share bells, which
// costs spurious wake-ups only. Waiters of the same Locker are also woken
// by its handles' releases in this process, without the server.
//
// # Layering
//
// The *fence.Locker that New returns is the portable locker over this
// package's store, which holds only the SQL. The portable layer validates keys,
// TTLs, owners and leases, generates owner ids, checks ctx, sets
// Lease.ValidUntil to its send time plus TTL, wraps every error as
// "fence/mysql: <op> <key>: <cause>", and refuses a Renew or Release of a
// lease whose latest ValidUntil has passed on Options.Clock without asking
// the server. The Locker's As gives the *sql.DB it runs on (the one given
// to New, or the one a URL opener made) to a **sql.DB.
//
// # Opening from a URL
//
// Importing the package registers the URL scheme "mysql" with
// fence.OpenLocker:
//
//	mysql://[USER[:PASSWORD]@]HOST[:PORT]/DB[?table=T&DRIVER-PARAMS]
//
// table is the lease table (Options.Table); every other parameter is
// go-sql-driver/mysql's (tls, timeout, readTimeout, ...). The port
// defaults to 3306. A password in the URL is accepted but discouraged;
// no error shows it. The opened locker's Close closes the *sql.DB it
// made, and its Create creates the table.

package mysql

import (
	"database/sql"
	"sync/atomic"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Limits of the MySQL locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes (the key column is
	// VARBINARY(1024)).
	MaxKeyLen = 1024
	// MaxOwnerLen is the longest owner id accepted, in bytes.
	MaxOwnerLen = 1024
	// MinTTL and MaxTTL bound the lease duration. MinTTL is the shortest lease a client can keep
	// over a network: a fence.Session renews every TTL/3 and bounds each call
	// by TTL/3, so at 100 ms a round trip to the server, with on a cold pool
	// a new connection, has about 33 ms; the 1 ms leases the server would
	// take run out before the first call returns. The server
	// stores expiries in microseconds; a TTL is rounded up to a whole
	// microsecond there, so the server's lease is never shorter than the
	// caller's.
	MinTTL = 100 * time.Millisecond
	MaxTTL = 24 * time.Hour
	// DefaultTable is the lease table used when Options.Table is empty.
	DefaultTable = "fence_locks"
	// DefaultWakeConns is Options.WakeConns on a pool without a limit.
	DefaultWakeConns = 9
)

// Options configure New. A nil *Options means all defaults.
type Options struct {
	// Table names the lease table, optionally with its database as
	// "db.table". Each part is quoted as given (so it may hold any
	// character but NUL, '`' and '.') and is at most 64 characters.
	// Default: DefaultTable, in the connection's database.
	Table string
	// Clock supplies the send times from which Lease.ValidUntil and
	// HeldError.ValidUntil are computed, and on which the portable layer
	// refuses a Renew or Release of a lease that ran out. Whether a key is
	// held is decided by the server. Default: fence.SystemClock.
	Clock fence.Clock
	// WakeConns is how many connections of db the Locker may hold to
	// wake waiters on release (see "Waking waiters"): one, while it holds
	// leases, for their bells, and one for each key a Session of this
	// Locker waits on, so WakeConns-1 keys at once; further waiters poll.
	// A negative value turns the wake-ups off: waiters poll
	// (SessionOptions.PollInterval) or wait for the holder's expiry.
	// Default (0): DefaultWakeConns when db's pool has no limit
	// (database/sql's default), and off when it has one
	// (db.SetMaxOpenConns), so that the wake-ups never hold connections
	// that the leases' statements wait for; with a limit, set WakeConns
	// and leave room for it in the pool.
	WakeConns int
}

// New returns a *fence.Locker that keeps its leases in the table named by
// opts (see Options) through db, which must reach the primary server. It
// checks the options but does not touch the server; create the table
// with the Locker's Create or with the statement from SchemaSQL. Create
// is idempotent, and replicas may run it at once: MySQL's metadata locks
// serialise concurrent creators. The Locker's Close does not close db;
// it frees what the Locker holds on it: its prepared statements (about
// five, on each connection that ran them) and its bells' connection. A
// Locker dropped without Close leaves its statements prepared until
// their connections close: make one Locker per table and keep it.
func New(db *sql.DB, opts *Options) (*fence.Locker, error) {
	l, _, err := newLocker(db, opts, nil)
	return l, err
}

// newLocker is New, with the store under the Locker and the Locker's
// Close (the URL opener's, which closes its *sql.DB).
func newLocker(db *sql.DB, opts *Options, closeDB func() error) (*fence.Locker, *store, error) {
	if db == nil {
		return nil, nil, &fence.InvalidError{Field: "db", Reason: "nil"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	quoted, err := parseTable(o.Table)
	if err != nil {
		return nil, nil, err
	}
	if o.WakeConns == 0 && db.Stats().MaxOpenConnections == 0 {
		o.WakeConns = DefaultWakeConns
	}
	clock := driver.ClockOrSystem(o.Clock)
	d := &store{db: db, clock: clock, table: quoted, q: buildQueries(quoted), prep: newPrepared(db)}
	if o.WakeConns > 0 {
		d.bells = newBells(db)
	}
	if o.WakeConns > 1 {
		d.slots = make(chan struct{}, o.WakeConns-1)
	}
	closeAll := func() error {
		d.prep.close()
		if d.bells != nil {
			d.bells.close()
		}
		if closeDB != nil {
			return closeDB()
		}
		return nil
	}
	l, err := driver.NewLocker(d, &driver.LockerOptions{Clock: clock, Close: closeAll})
	if err != nil {
		return nil, nil, err
	}
	return l, d, nil
}

// dialect says whether the server has INSERT .. RETURNING.
type dialect int32

const (
	dialectUnknown   dialect = iota
	dialectMariaDB           // INSERT .. RETURNING (MariaDB 10.5 and later)
	dialectNoReturns         // MySQL: no RETURNING
)

// dialectOf holds a driver's dialect, learnt on first use.
type dialectOf struct{ v atomic.Int32 }

func (d *dialectOf) get() dialect  { return dialect(d.v.Load()) }
func (d *dialectOf) set(v dialect) { d.v.Store(int32(v)) }
