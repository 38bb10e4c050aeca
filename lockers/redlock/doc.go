// Package redlock keeps the leases of a *fence.Locker on N independent
// Redis masters: it takes a lock on a majority of them, as Redlock does,
// and issues fencing tokens that cannot repeat while a majority of the
// masters keep their data. It uses github.com/redis/go-redis/v9. New
// returns the Locker over clients of the caller's; fence.OpenLocker opens
// one from a URL (below).
//
// Redlock alone is not a correctness guarantee: a holder that pauses past
// its lease, or a master whose clock jumps, lets two holders in at once,
// and Redlock gives them nothing to tell them apart. This package adds
// the token: pass Lease.Token to a fenced resource (see package fence),
// which refuses the older holder's writes. Holding a lease is not a safety
// guarantee; only its token, checked by the resource, is.
//
// # Masters
//
// New takes one Client per master: N independent Redis servers (not
// replicas of one another, not a cluster's shards; each may be a Redis
// Cluster or a Sentinel group seen through one client, but then its own
// failover is inside one vote). Use an odd N of at least 3: a lease needs
// a quorum of N/2+1 masters, so 3 masters survive the loss of one, 5 of
// two. Every call runs one script on every master at once and waits for
// all the answers (or errors), so give the clients short timeouts,
// ContextTimeoutEnabled, no retries and one dial attempt (go-redis's
// default of five dials 100 ms apart makes a killed master cost every call
// 400 ms), as the URL opener does.
//
// # Records
//
// Each key has two strings on every master (PREFIX is Options.Prefix,
// "fence:" by default), and a third once a holder published a value:
//
//	PREFIX lock:KEY    "TOKEN OWNER", with an expiry (PX): the lock
//	PREFIX token:KEY   "TOKEN OWNER", no expiry, never deleted: the counter
//	PREFIX value:KEY   "TOKEN VALUE", no expiry: the value published with the lease of TOKEN
//
// TOKEN is a decimal from 1 to 2^63-1 without sign or leading
// zero, then one space, then the owner id. A master's counter is the
// highest token any attempt took that master's lock with, and its owner; a
// lock's token is never above its master's counter. Release and Break
// delete the lock and keep the counter. Release notifications go to the
// channel PREFIX released, with the key as message. Anything else found in
// these keys (another form, another type, a lock above its counter or
// without expiry) is reported with a *fence.CorruptError and never written
// over; mend it by hand. Never lower or delete a counter: that can reissue
// tokens (see below).
//
// # Acquiring
//
// An Acquire is rounds of one script on every master at once. The script
// takes the master's lock, in one atomic step, if the lock is free and
// the master's counter is below the proposed token; it then sets both the
// lock (with PX TTL, timed by the master) and the counter to "TOKEN
// OWNER". Otherwise it answers held (with the lock and its remaining
// time) or stale (with the counter). The tokens are compared as decimal
// strings, never as Lua numbers, which lose precision above 2^53.
//
//   - When a quorum took the lock with one token, and the time since the
//     request leaves validity, TTL - elapsed - (TTL*DriftFactor + 2 ms) >
//     0, the lease is handed out with that token: one round.
//   - When a quorum is free of other owners but some counters were not
//     below the proposal, the next round proposes one more than the
//     highest counter any master reported, taking over the locks this
//     attempt took in the round before (at most four rounds; then the
//     portable layer tries once more, then reports the key busy).
//   - When one owner holds a quorum, the attempt fails with a
//     *fence.HeldError naming it, its token and when its quorum ends.
//   - When contenders took the masters apart and none has a quorum, the
//     attempt is retried after a random wait (Options.RetryCount,
//     RetryDelay), and then fails with a *fence.HeldError without owner.
//   - Otherwise (too few masters answered) it fails with the masters'
//     errors, which the caller may retry.
//
// A failed attempt deletes what it may have taken (the locks it set, and
// those whose answer was lost), with a context of its own. The counters it
// raised stay raised: that only skips tokens.
//
// # Tokens
//
// The first proposal of an attempt is the locker's clock in microseconds
// since 1970 (Options.Clock). That is a performance choice, not a safety
// one: a proposal at or below a quorum's counters is refused and the next
// round proposes above them, so any clock, however wrong, gives correct
// tokens; a clock that is behind the last acquirer's only costs a second
// round. Tokens are therefore large (about 1.8e15 in 2026) and not
// consecutive, and they stay below 2^53 until the year 2255.
//
// Why a token cannot repeat, or go backwards, while a majority of masters
// keep their data: a lease with token T is handed out only after a quorum
// Q of masters each ran the script that found its counter below T and set
// it to T. Counters only rise. Any two quorums share a master. So if lease
// A (token Ta, quorum Qa) was handed out before an attempt B started, B's
// quorum Qb shares a master m with Qa; A's script ran on m before B's, so
// m's counter was at least Ta when B's script required it to be below Tb:
// Tb > Ta. Two leases, even at the same time (after an expiry), never get
// one token: on their shared master the second script needed the counter
// below its token, and the first had set it to its own. A Break therefore
// need not raise the counters: the broken holder's token is on a quorum
// already.
//
// Where the argument stops holding:
//
//   - A master that loses writes it acknowledged. A master restarted
//     without persistence comes back empty; one with appendfsync everysec
//     can lose the last second; a failover to a replica that lagged, an
//     operator's FLUSHALL or a deleted counter do the same. The argument
//     needs every quorum to share a master that kept the last token. It
//     breaks when a quorum forms of masters none of which holds it: with 3
//     masters, a lease written to {0, 1} while 2 was down; 2 comes back,
//     0 restarts empty, 1 is down: {0, 2} reissues the token
//     (TestTokensAfterMastersLoseData/QuorumWithoutTheLastToken shows it).
//     One master lost at a time is outvoted (OneDownOneEmpty). Run the
//     masters with appendonly yes and appendfsync always, or bring a
//     master that lost data back only after a TTL and after every token
//     it had has been written to a quorum of the others by later leases
//     (Redlock's "delayed restart" protects the lock, not the counter).
//   - Clock jumps on the masters break the lock, not the token: a
//     master's expiry follows its wall clock, so a jump forward ends a
//     lease early and lets a second holder in while the first works on.
//     The tokens still increase (no clock is in their argument), and the
//     resource refuses the first holder's writes.
//   - A holder whose lease ran out (a pause, a slow network) still has its
//     token and may still write: the lock does not stop it, the resource
//     does, because the next holder's token is higher.
//   - DriftFactor covers masters' clocks that run faster than this
//     process's, not jumps: Lease.ValidUntil is the send time plus TTL, as
//     for every backend, and a master running fast by DriftFactor ends its
//     copy up to TTL*DriftFactor + 2 ms sooner.
//
// # Renewing, releasing, breaking, inspecting
//
// Renew extends the lease's lock (owner and token compared) on every
// master that still holds it, and succeeds if a quorum did before the
// validity ran out; when more than N minus a quorum no longer hold it, it
// answers fence.ErrNotHeld. Release is compare-and-delete on every master:
// it succeeds if a quorum deleted it, answers fence.ErrNotHeld when it
// cannot have been held on a quorum, and otherwise returns the masters'
// errors. Break deletes the lock on every master whoever holds it and
// succeeds once a quorum answered. Inspect reads both records on every
// master and needs a quorum of answers: the key is held when one lock
// record is on a quorum (ValidUntil is when fewer than a quorum of those
// copies remain), and otherwise free with the highest counter any master
// reported as Token and Owner. That counter may be the proposal of an
// attempt that took some masters but not a quorum: it was never handed
// out, only skipped.
//
// The store is a driver.BatchRenewer: a fence.Session's renewal round
// sends every master the renew scripts of all its due leases in one
// pipeline, the masters at once, so a round is one request per master
// whatever the number of leases (TestSessionRenewalRequests counts them
// at 1, 100 and 1,000), and each lease is counted against the quorum as
// Renew counts it. A Client without Pipelined (not a go-redis client)
// gets one script per lease.
//
// # Public values
//
// Publish works as Renew does: on every master at once, a script sets the
// value record to "TOKEN VALUE" where the master's lock is the lease's,
// and PUBLISHes the key on the release channel; it succeeds if a quorum
// wrote it, answers fence.ErrNotHeld when the lease cannot be held on a
// quorum, and otherwise returns the masters' errors. Inspect of a held
// key reports as Value the value that a quorum of masters hold with the
// holder's token, and no value when none has a quorum: a Publish that
// reached only a minority (and returned an error) is not shown, and the
// value a quorum held before it, if any, still is. Another Publish that
// reaches a quorum settles it. The value record stays after its lease
// ends, until the key's next Publish, but is only reported with its
// token. A value record that does not parse is reported with
// fence.ErrCorrupt by Inspect of a held key. Acquire, Renew and Release
// do not touch it.
//
// # Multi-key locks
//
// The store is not a driver.MultiAcquirer: no atomic operation spans the
// independent masters, and a set taken on a quorum of masters per key is
// already what taking the keys one at a time does. fence.Session.LockAll
// takes the keys one at a time in a global order and gives back what it
// took when one is busy, so crossing sets never deadlock.
//
// # Release notifications
//
// The store is a driver.ReleaseNotifier: Release PUBLISHes the key on
// every master where it deleted the lock, Publish on every master where
// it wrote the value, Break on every master it ran on,
// and a Locker that waits (fence.Session.Lock)
// subscribes once to the channel on every master and returns from
// NotifyRelease when a quorum of subscriptions is confirmed. A Release or
// Break that succeeded published on a quorum, which meets that one. After
// a lost connection go-redis subscribes again, and every waiter is woken
// to ask the masters again (a release may have been missed). A lease that
// expires publishes nothing; a waiter wakes at the holder's expiry from
// its HeldError. The Locker's Close ends the subscriptions.
//
// The Locker's As gives the masters' clients, in order, to a *[]Client:
// those given to New, or those the URL opener made (*goredis.Client).
//
// # Opening from a URL
//
// Importing the package registers the URL scheme "redlock" with
// fence.OpenLocker:
//
//	redlock://[USER:PASSWORD@]HOST1:PORT1,HOST2:PORT2,HOST3:PORT3/[?prefix=P&db=N&timeout=D&tls=B]
//
// Each HOST:PORT is one master (port 6379 when none is given; give every
// master its port, or none: net/url requires the last one to have it when
// any has; an IPv6 address works only as the only master). The user and
// password, db, timeout (dial, read and write; default 500ms)
// and tls apply to every master; prefix is Options.Prefix. No error shows
// the password. The opener makes one client per master, failing fast as
// above, and the opened locker's Close closes them.
package redlock
