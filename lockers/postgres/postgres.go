// Package postgres keeps the leases of a fence.Locker in PostgreSQL.
// There are two ways in, with the same lease table, statements, errors
// and guarantees:
//
//   - New, on pgx: a *pgxpool.Pool (or a *pgx.Conn);
//   - NewSQL, on a *sql.DB whose driver is pgx's
//     (github.com/jackc/pgx/v5/stdlib) or lib/pq (github.com/lib/pq).
//
// They differ in how a waiting fence.Session.Lock learns that a key was
// released: on a pool, or a *sql.DB with pgx's driver, the Locker listens
// for the releases and wakes the waiter at once; on lib/pq it cannot, and
// Lock polls (see Release notifications).
//
// Each key is one row of a lease table (see SchemaSQL): the key, the owner
// of the last lease, the fencing token (a counter that only grows) and the
// expiry, NULL while the key is free. Rows are never deleted: releasing or
// breaking a lease clears the expiry and keeps the counter, so the next
// token continues the sequence. Do not delete rows by hand; that restarts
// a key's tokens at 1.
//
// Every method is one SQL statement, one round trip once pgx has prepared
// it (pgx's default mode caches prepared statements per connection, also
// behind database/sql; lib/pq prepares each statement anew, which makes
// two round trips), but for the first Acquire of a key, which creates its
// row with a second statement. That includes the renewals of a fence.Session's
// keepalive: it renews every lease the session holds, each by its own
// TTL, in one statement per renewal round, however many there are.
// Whether a key is held is decided by the server's clock, never by the
// caller's: durations are sent to the server and remaining lease times
// come back, so clock skew between machines does not matter, only clock
// rates do.
//
// A failed Acquire writes nothing: it is a conditional UPDATE that matches
// no row, so it takes no row lock, gets no transaction id and commits no
// WAL. Many contenders on a held key therefore cost the server only reads.
//
// A fence.Session.LockAll of several keys is one statement too, all or
// nothing (up to 1000 keys; a larger set is taken one key at a time): it
// reads the keys' rows, and when none is held it locks them in key order
// and takes them all, creating the rows of new keys, each with its own
// key's next token. When a key is held it writes nothing and locks
// nothing, and names that key in its fence.HeldError. It never waits for
// a row lock (it skips a row another transaction has locked, and counts
// that as a lost race, which the portable layer tries once more), so it
// cannot take part in a deadlock; a set is taken or not in one commit.
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence).
//
// # Layering
//
// The *fence.Locker that New or NewSQL returns is the portable locker over this
// package's store, which holds only the SQL. The
// portable layer validates keys, TTLs, owners and leases, generates owner ids,
// checks ctx, sets Lease.ValidUntil to its send time plus TTL, wraps every
// error as "fence/postgres: <op> <key>: <cause>", and refuses a Renew or
// Release of a lease whose latest ValidUntil has passed on Options.Clock
// without asking the server. That local refusal is conservative:
// ValidUntil counts the TTL from before the statement was sent, the
// server from when it received it, so a lease runs out locally no later
// than on the server (clocks running at the same rate); a Release refused
// in between leaves the key to expire on the server moments later.
// TryXactLock, AdvisoryKey and SchemaSQL are specific to PostgreSQL, and
// so is what the Locker's As gives:
//
//   - to a *DB: the DB given to New (the pool a URL opener made);
//   - to a **pgxpool.Pool or a **pgx.Conn: that DB, when it is one;
//   - to a **sql.DB: the *sql.DB given to NewSQL.
//
// # Opening from a URL
//
// Importing the package registers the URL schemes "postgres" and
// "postgresql" with fence.OpenLocker:
//
//	postgres://[USER[:PASSWORD]@]HOST[:PORT]/DB[?table=T&sslmode=...]
//
// table is the lease table (Options.Table, "table" or "schema.table";
// default DefaultTable). Every other parameter, and the rest of the URL,
// is pgx's connection string (see pgxpool.ParseConfig, including the
// pool_ parameters); a parameter that is neither table nor a connection
// parameter of libpq or pgx is refused with fence.ErrInvalid, and a server
// setting goes in options=-c NAME=VALUE (options=-c%20search_path%3Dapp),
// as in libpq. Credentials come from it or from libpq's usual
// environment (PGPASSWORD, PGPASSFILE, PGSSLMODE, ...). A password in the
// URL is accepted but discouraged (command lines are visible in ps); no
// error shows it. The opened locker's Close closes the pool it made, and
// its Create creates the table (see New).
//
// # The lease table
//
// One row per key (DefaultTable, "fence_locks", unless Options.Table says
// otherwise; see SchemaSQL), with these columns:
//
//   - key text, the primary key: the lock key as given.
//   - owner text NOT NULL: the owner id of the current or last lease.
//   - token bigint NOT NULL: the last token issued, 1 to 2^63-1. Acquire
//     sets it to token + 1 (1 for a new row); nothing else changes it.
//   - expires_at timestamptz: when the current lease ends on the server's
//     clock, or NULL when the key is free (released or broken).
//   - value text and value_token bigint: the value last published with a
//     lease (Locker.Publish), in base64 (a value may hold any bytes,
//     which text cannot; NULL when empty), and that lease's token.
//     Inspect reports the value only while the lease of that token is
//     held, so a new lease starts with none and Acquire, Renew and
//     Release never write these columns.
//
// A table made by an earlier version has no value columns. Every call
// but Publish works on it; Publish returns an error matching
// fence.ErrStoreMissing that says to run Create, which adds them (or
// AddValueSQL, for migration tools). To read a value by hand:
// convert_from(decode(value, 'base64'), 'UTF8').
//
// A key is held while expires_at > statement_timestamp(). To look:
//
//	SELECT key, owner, token, expires_at, coalesce(expires_at > now(), false) AS held
//	FROM fence_locks WHERE key = 'k';
//
// To free a key by hand, do what Break does: UPDATE fence_locks SET
// expires_at = NULL WHERE key = 'k', and tell the waiters (see Release
// notifications): SELECT pg_notify(CHANNEL, md5(convert_to('k', 'UTF8'))).
// Never lower a token or delete a row.
// A row with a NULL owner or token (possible only after altering the
// table), a token below 1 or an infinite expires_at is reported with
// fence.ErrCorrupt and is never written over by Acquire.
//
// # Release notifications
//
// A fence.Session.Lock waiting for a key on this locker does not poll: it
// waits for a notification (the store is a driver.ReleaseNotifier).
// Release and Break send one, from the statement that frees the row, and
// Publish from the statement that sets the value (so that an election's
// followers see a new value at once),
// with pg_notify on the channel "fence_" followed by the md5 of the
// quoted table name in hex (for DefaultTable, the md5 of
// `"fence_locks"`, quotes included), with the md5 of the key's UTF-8
// bytes in hex as payload; PostgreSQL delivers it when the statement
// commits. Lockers hear each other when they name the table the same way
// (both "fence_locks", or both "public.fence_locks").
//
// Each Locker on a *pgxpool.Pool keeps one connection that LISTENs,
// opened from the pool's configuration on the first wait (not taken from
// the pool; application_name "fence listener" unless the configuration
// sets one), and passes what it hears to its waiters. A Locker on a
// *sql.DB with pgx's driver does the same, with the configuration of one
// of the DB's connections. When that connection is lost, every waiter
// asks the server again, and again once it reconnects (with backoff,
// while anyone waits). It closes a minute after the last wait, or with
// Close. A Locker on a *pgx.Conn, a pgx.Tx or a *sql.DB of lib/pq cannot
// listen: Lock polls (fence.SessionOptions.PollInterval). Its releases
// notify the others all the same.
//
// A lease that expires sends nothing: nothing runs on the server when it
// does. A waiter knows the holder's expiry from the fence.HeldError of
// its last attempt, and tries again just after it.
//
// PostgreSQL serializes the commits of all the transactions of a server
// that notify, flush to disk included, so a release notifies only while
// someone listens on its table: a listening connection holds 64 advisory
// locks in shared mode, pg_advisory_lock_shared(NS, 0..63), where NS is
// the channel's md5's first four bytes as a signed integer, and the
// freeing statement notifies only when pg_try_advisory_xact_lock(NS, S)
// fails for its key's slot S (the first byte of the key's md5, modulo 64).
// That try also fails, rarely, while another release of the same slot
// commits: a spurious notification, which costs only a wasted attempt.
// With nobody listening, a release writes and waits as it did without
// notifications. These two-key advisory locks are apart from TryXactLock's
// (which take one bigint); another application's two-key advisory locks
// with the same first key would meet them.
//
// # Ambiguous outcomes
//
// When ctx ends while a statement is in flight, the driver interrupts the
// call (it cancels the query or closes the connection) and the method returns
// an error wrapping ctx.Err(), but the server may still have run and
// committed the statement. Never assume it
// did not: after an ambiguous Acquire, Inspect the key (an Acquire with
// AcquireOptions.Owner set shows whether that owner got it) or wait for the
// lease to expire; after an ambiguous Release or Renew, repeat it with a
// fresh context (both are idempotent: a Release that had landed answers
// fence.ErrNotHeld).
//
// # Advisory locks
//
// For work that lives inside one PostgreSQL transaction, TryXactLock takes
// a transaction-scoped advisory lock instead; the transaction is then the
// fence and no lease outlives it.

package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Limits of the PostgreSQL locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes of UTF-8.
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
)

// DB is the part of pgx that New uses. *pgxpool.Pool and *pgx.Conn
// satisfy it. Use a pool (or a connection) in autocommit mode: a pgx.Tx
// satisfies DB too, but its leases would be invisible to other sessions
// until it commits. For a *sql.DB, use NewSQL.
type DB interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Options configure New and NewSQL. A nil *Options means all defaults.
type Options struct {
	// Table names the lease table, optionally schema-qualified as
	// "schema.table". Each part is quoted as given, so "Locks" is
	// case-sensitive and may hold any character except NUL and '.';
	// each part is at most 63 bytes (PostgreSQL's identifier limit).
	// Default: DefaultTable, in the connection's search_path.
	Table string
	// Clock supplies the send times from which Lease.ValidUntil and
	// HeldError.ValidUntil are computed, and on which the portable layer
	// refuses a Renew or Release of a lease that ran out. Whether a key
	// is held is decided by the server. Default: fence.SystemClock.
	Clock fence.Clock
}

// New returns a *fence.Locker that keeps its leases in the table named by
// opts (see Options) through db. It checks the options but does not touch
// the server; create the table with the Locker's Create or with the
// statement from SchemaSQL.
//
// The Locker's Create creates the lease table if it does not exist yet
// (the statement of SchemaSQL). It is idempotent, and replicas may run
// it at once: it runs the statement under a transaction-scoped advisory
// lock of the table, so that concurrent creators run one after the other
// (a bare CREATE TABLE IF NOT EXISTS racing another fails with a unique
// violation). It creates tables, not schemas: if the table's schema does
// not exist, the error says so and matches fence.ErrStoreMissing.
//
// The Locker's Close stops its listening connection, if it has one (see
// "Release notifications" in the package doc), and waits for it to
// close; waiters in Session.Lock then ask the server again and go on by
// polling. It does not close db: the Locker's other methods still work.
// Call it when done with a Locker on a pool that has waited in Lock; the
// connection otherwise closes a minute after the last wait.
func New(db DB, opts *Options) (*fence.Locker, error) {
	if db == nil {
		return nil, &fence.InvalidError{Field: "db", Reason: "nil"}
	}
	l, _, err := newLocker(pgxRunner{db}, opts, nil)
	return l, err
}

// newLocker is New and NewSQL, with the store under the Locker and
// closeDB, which the Locker's Close calls after stopping the listener
// (the URL opener's pool).
func newLocker(db runner, opts *Options, closeDB func()) (*fence.Locker, *store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	id, err := parseTable(o.Table)
	if err != nil {
		return nil, nil, err
	}
	clock := driver.ClockOrSystem(o.Clock)
	quoted := id.Sanitize()
	d := &store{db: db, clock: clock, table: id, q: buildQueries(quoted), ln: db.listener(notifyNamesOf(quoted))}
	closeAll := func() error {
		d.ln.close()
		if closeDB != nil {
			closeDB()
		}
		return nil
	}
	l, err := driver.NewLocker(d, &driver.LockerOptions{Clock: clock, Close: closeAll})
	if err != nil {
		return nil, nil, err
	}
	return l, d, nil
}
