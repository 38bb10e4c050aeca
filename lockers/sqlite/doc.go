// Package sqlite keeps the leases of a fence.Locker in a table of an
// SQLite file: a store that needs no server, shared by the processes of
// one host. It is the fence command's default store.
//
// Open it from a URL (importing the package registers the scheme
// "sqlite" with fence.OpenLocker):
//
//	sqlite:///ABSOLUTE/PATH.db[?table=T&busy-timeout=D]
//	sqlite://RELATIVE/PATH.db[?...]
//
// the same file forms as the SQL resource's sqlite:// URLs
// (resources/sql/sqlite), so one file can hold the locks and the fenced
// data (their tables have different names). table names the lease table
// (Options.Table, default DefaultTable); busy-timeout is how long a call
// waits for another writer's lock (default 10s; the call's context ends
// the wait sooner). The file is made when missing (its directory is
// not), in WAL mode, and the lease table is created in it when missing;
// several processes may open a new file at once. The opened locker's Close
// closes the database, and its As gives the *sql.DB.
//
// New takes a *sql.DB of the program's own (modernc.org/sqlite, which
// this package imports, or another SQLite driver of SQLite 3.37 or
// later), opened in WAL mode with a busy timeout, for example
//
//	file:/var/lib/app/app.db?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)
//
// Its Locker creates the table on its first call; it does not close the
// database.
//
// # The lease table
//
// One row per key, never deleted (a STRICT table without rowid):
//
//   - key TEXT, the primary key: the lock key as given;
//   - owner TEXT: the owner id of the current or last lease;
//   - token INTEGER: the last token issued, 1 to 2^63-1. Acquire sets it
//     to token + 1 (1 for a new row); nothing else changes it;
//   - expires INTEGER: when the current lease ends, in Unix nanoseconds
//     on the host's clock, or NULL while the key is free;
//   - value BLOB and value_token INTEGER: the value last published with
//     a lease (Locker.Publish; NULL when empty) and that lease's token.
//     Inspect reports the value only while the lease of that token is
//     held, so a new lease starts with none and Acquire never writes
//     these columns.
//
// A table made by an earlier version has no value columns: the
// Locker's first call (or its Create) adds them, in one write
// transaction, so processes of both versions can share the file.
//
// Releasing or breaking a lease sets expires to NULL and keeps the row,
// so the next token continues the sequence: do not delete rows, which
// restarts a key's tokens at 1. A row with an empty owner, a token below
// 1 or a negative expires (possible only by hand) is reported with
// fence.ErrCorrupt and never written over; a key whose token reached
// 2^63-1 can no longer be acquired, also with fence.ErrCorrupt.
// To look (sqlite3 3.42 or later):
//
//	sqlite3 locks.db "SELECT key, token, coalesce(expires > unixepoch('subsec') * 1e9, 0) AS held FROM fence_locks"
//
// Every call is one SQL statement (Session.LockAll: one transaction),
// which SQLite runs atomically and in order with every other writer of
// the file, in any process: Acquire
// inserts or takes over the row only if it is new, free or expired, and
// Renew and Release change it only if the owner and token still hold it
// unexpired. A fence.Session renews all the leases due in a round with
// one statement, one commit, however many there are. A
// fence.Session.LockAll of several keys is one write transaction (BEGIN
// IMMEDIATE, a read of the keys' rows, one statement that takes them all,
// COMMIT), all or nothing: when a key is held it writes nothing; sets of
// more than 10,000 keys are taken one key at a time. A file opened from
// a URL syncs each commit to disk before the call returns (WAL mode with
// SQLite's default synchronous=FULL), so a token issued before a crash
// or a power loss is not issued again, as long as the disk keeps what it
// acknowledged.
//
// # What it guarantees, and where
//
// Every process that opens the file takes part: leases exclude each
// other across processes and Lockers, and tokens only grow. It is for
// one host: SQLite's locks are the file system's, which network file
// systems (NFS, SMB) do not keep reliably; never put the file on one,
// nor share it between containers that do not share the host's kernel.
//
// A process that crashes (SIGKILL, power loss) releases nothing: its
// leases run out at their expiry, one TTL after its last renewal, and a
// waiter takes the key over then, with a higher token. An interrupted
// statement leaves nothing half-written: SQLite rolls it back.
//
// Leases are timed by the host's wall clock (Options.Clock), which every
// process on the host shares. A step of that clock moves every expiry
// with it: a step forward ends leases early (a second holder may take
// the key while the first still works; its token is higher, so a fenced
// resource refuses the first holder's writes), and a step back delays the
// takeover of a crashed holder's lease by the size of the step. A
// holder's own fence.Session measures its lease on the monotonic clock
// and is not affected. Holding a lease is not a safety guarantee, only
// its token is: pass Lease.Token to a fenced resource (see package
// fence).
//
// # Waiting
//
// A fence.Session.Lock waiting for a key wakes at once when a Locker of
// this Locker releases or breaks it. A
// release by another process is seen by polling: while anyone waits,
// the Locker reads the rows of the keys waited for every
// Options.PollInterval (DefaultPollInterval, 50 ms), one indexed read of
// a local file each. A Publish wakes the key's waiters the same way: at
// once in its own Locker, at the next poll in the others, which wake a
// waiter when the lease or its value changed since their last read. A
// waiter's first read is made when it subscribes, so a change made by
// another process just after is seen at the next poll too (tested:
// lockertest's Publish/WakesWaiters).
package sqlite
