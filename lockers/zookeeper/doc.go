// Package zookeeper keeps the leases of a fence.Locker in an Apache
// ZooKeeper ensemble, driven through github.com/z-division/go-zookeeper/zk:
// the lock recipe of Apache Curator's InterProcessMutex, with the lock
// node's czxid as the fencing token and the client's ZooKeeper session as
// the lease. New returns the *fence.Locker over a connection; the
// Locker's As gives that connection (the one given to New, or the one a
// URL opener made) to a **zk.Conn.
//
// The client is Vitess's fork of go-zookeeper/zk, with the same API.
// go-zookeeper/zk v1.0.4 reads the last zxid seen while its receive loop
// writes it, when it sets its watches again after a reconnection (a data
// race the race detector found in the fault-injection run, where
// connections are cut while watches are set); the fork reads and writes it
// atomically.
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence).
//
// # Node layout
//
// Each lock key K has two paths under the locker's root R (Options.Root,
// default DefaultRoot, "/fence"), where E(K) is K escaped into one path
// component (ASCII letters, digits, '_', '-' and a '.' not first stay;
// every other byte is %XX: "jobs/nightly" is "jobs%2Fnightly"):
//
//   - R/E(K), the lock path (LockPath), a persistent node whose
//     children are the lock nodes: ephemeral sequential nodes named as
//     Curator's protected nodes, "_c_" UUID "-lock-" and the server's
//     ten-digit sequence number. Their data is "fence/1 owner " and the
//     owner id, followed, once the holder published a value
//     (Locker.Publish), by a NUL byte and the value's bytes. The first child in Curator's order (by what follows the
//     last "lock-" in the name) holds the key; the others are contenders
//     about to delete their node, or Curator clients waiting in line.
//   - R/.last/E(K), the last record, persistent and
//     never deleted: "fence/1 last ", the token and the owner id of the
//     key's last acquisition through this package; or, when that
//     acquisition wrote it in the transaction that created its lock
//     node, "fence/1 last-mzxid " and the owner id, the token being the
//     record's mzxid. Inspect reports it for a free key.
//
// No key escapes to a name starting with '.', so ".last" is no key's
// lock path. Do not write under R by hand; to free a key, do what Break
// does (delete the first lock node). A last record that does not parse,
// or names a token not below a new lock node's czxid, and a lock node
// whose data starts with "fence/" but does not parse, are reported with
// fence.ErrCorrupt (a *fence.CorruptError); Acquire never writes over
// them (but see the one-write Acquire below). With zkCli.sh:
//
//	ls /fence/jobs%2Fnightly             # the lock nodes, the first holds
//	stat /fence/jobs%2Fnightly/_c_...    # czxid is the token, ephemeralOwner the session
//	get /fence/.last/jobs%2Fnightly      # the last acquisition
//
// # Acquiring
//
// Acquire tries once, as fence asks of every locker, where Curator's
// acquire would wait in line: it creates its lock node, then, in one
// round trip, lists the lock path's children and reads its own node's
// czxid and the last record. When its node is first, it holds the key:
// one multi-operation writes the last record on the condition that its
// node still exists (and that the record did not change since it was
// read), and the lease is returned. Otherwise it deletes its node and
// returns a *fence.HeldError naming the first node's owner and czxid. A
// node is first only if no older node exists, and the server numbers
// nodes in the order it creates them, so at most one node is first at a
// time, whoever created it: a Curator client and this package exclude
// each other on the same path.
//
// A Locker that has seen the key's last record valid (its own earlier
// Acquire read or wrote it) first tries the key as free, in one
// multi-operation: it deletes the lock path, which the server refuses
// unless the path has no child (no holder, no contender, no Curator
// client in line), creates it again with the new lock node under it, and
// writes the last record. That is one write where the long way takes
// two, and the key is taken and recorded in one transaction. Refused
// because the path has nodes, Acquire reads the first one for its
// *fence.HeldError (the refused multi-operation is a write too: the
// servers log it); refused for another reason, it takes the long way.
// The new token must exceed the one of the record last seen, or Acquire
// reports the record as corrupt; the record itself is not read again, so
// one corrupted since this Locker saw it valid is written over. The lock
// nodes under a lock path created again are numbered from 0 again: the
// order of the nodes under a path stays the order of their creation.
//
// A contender's node that is first for a moment (its Acquire lost to a
// holder that left since) makes an Acquire of that moment lose, naming
// the contender; a Session's Lock is then woken when the contender's
// node goes.
//
// # Tokens
//
// The czxid of a node is the zxid of the transaction that created it:
// the ensemble's counter of writes, ordered by its atomic broadcast,
// which only grows, across leader changes (the epoch is its high 32 bits)
// and restarts. Each acquisition creates a new node, so its token is
// higher than that of every acquisition of the key before it, through
// this package or Curator, across release, session expiry, Break and
// failover. Renewals do not touch the node, so the token stays. Tokens
// of a key are not consecutive. A new ensemble (its data directories
// wiped) starts zxids again from low numbers: the last records and the
// resources' high-water marks then refuse its tokens until they pass the
// old ones (Acquire reports the last record as corrupt).
//
// # Leases, sessions and time
//
// A lock node lives as long as the session that created it: the server
// deletes it when the session ends, closed by the client, or expired by
// the leader after the session timeout without hearing from the client
// (the client pings every third of it). The session is thus the lease
// the server enforces; fence's TTL is the lease the holder sees, and it
// must never outlast the server's guarantee:
//
//   - The longest TTL is two thirds of Options.SessionTimeout, the
//     session timeout the server negotiated. A Renew syncs the server it
//     talks to with the leader and reads its lock node: a node still
//     there, with the lease's token as czxid and this client's session as
//     its ephemeral owner, shows the session alive after the renewal was
//     sent, and the touch of the session by that request reaches the
//     leader within half a tick (at most a quarter of the session
//     timeout). So the server keeps the node at least TTL after the send
//     time, which is when the holder's lease (Lease.ValidUntil, on
//     Options.Clock) ends, whatever the network does next: a holder cut
//     off its server (TestSessionExpiryLosesLease) loses its lease before
//     the leader expires its session and another client can take the key.
//   - The session outlives a lease its holder stops renewing while its
//     process runs, so the locker deletes the lock node itself when the
//     lease runs out unrenewed (a timer on the system clock, at the send
//     time of its last renewal plus TTL, never before the lease's
//     ValidUntil): others can take the key after TTL, as with any
//     locker. A holder whose process dies or freezes frees the key when
//     the server expires its session, at most a session timeout later;
//     one that closes its connection frees it at once.
//   - The lease of a fence.HeldError and fence.LockInfo has no ValidUntil:
//     the holder's renewals are not written to the server.
//
// A Session renews all its due leases in one RenewBatch. Below 32
// leases it syncs once with the leader and sends the reads of every
// lease's node together: two round trips, one small read per lease that
// the server answers from memory, nothing written. From 32 leases on, it
// checks the nodes with multi-operations of up to 1,000 checks each,
// sent together: one round trip, one request per 1,000 leases, each a
// transaction the servers write to their log (some 70 bytes and the
// escaped key per lease, computed: about 0.7 MB per round at 10,000
// leases of short keys; keep the servers' autopurge on). A check refused
// because a node is gone is followed by the reads that tell which lease
// was lost. BenchmarkRenewRound measures a round at 1 to 10,000 leases.
//
// fence.SessionOptions' default TTL (30 s) needs a session timeout of
// 45 s or more, above the server's default maxSessionTimeout (40 s):
// give a Session a TTL of at most two thirds of the session timeout (the
// longest lease the locker accepts). A Session's keepalive
// renews every TTL/3 by default; with the client's
// own pings every third of the session timeout, a holder's session stays
// alive across a leader's failover that the ensemble completes within
// the session timeout (TestClusterLeaderKill), and so does its lease if
// a renewal gets through before it runs out.
//
// # Cancellation
//
// The ZooKeeper client takes no context: a request it sent is answered,
// or fails when the connection drops (after two thirds of the session
// timeout without an answer). Each call runs its requests on a goroutine
// of its own; when ctx ends first, the call returns at once with an
// error wrapping ctx.Err(), and its requests go on to their end, as the
// server would apply a request already sent. An Acquire may so still win
// its lease: Inspect shows it, and it runs out TTL after the Acquire's
// send time unless renewed, like a lease won by a lost answer on any
// locker. A Release or Break may still free the key. A lock node whose
// create was answered by a dropped connection is found by its UUID and
// deleted once the client reconnects.
//
// # Public values
//
// Publish sets the data of the lease's own lock node to "fence/1 owner ",
// the owner id, a NUL byte and the value (the owner id alone for an empty
// value), with the data version of this Locker's latest write to it (a
// version that moved on after a lost answer is read again, with the
// node's czxid and session). The value lives in the lease's ephemeral
// node, so it ends with the lease, and Inspect reports it with the
// holder. A Locker of an earlier release of this package reads such a
// node's owner id with the NUL and the value appended (or, for a value
// that is not UTF-8, reports the node corrupt): upgrade every process of
// a root before publishing. Acquire, Renew and Release do not touch the
// data.
//
// # Multi-key locks
//
// fence.Session.LockAll takes its keys in one multi-operation, the
// one-write Acquire above for every key at once: for each key, delete its
// lock path (refused unless it has no child), create it again with the
// new lock node under it, and write the last record (a lock path or last
// record this Locker has not seen is looked at first, one round trip for
// all of them, and created in the same multi-operation when missing). The
// servers apply all or none, and every lock node of the set has the
// transaction's zxid as its czxid: each key's token, above its earlier
// ones. Refused because a lock path has nodes (a holder, a contender or a
// Curator client in line), LockAll reports that key's holder in a
// fence.HeldError and nothing was written. A Locker that may not delete
// lock paths (an ACL) takes the keys one at a time instead.
//
// # Notifications
//
// A fence.Session's Lock waiting for a key watches the first lock node
// (the store is a driver.ReleaseNotifier), as Curator's waiters watch
// their predecessor, and is woken when it is deleted: a release, a
// Break, a lease this package let run out, or the end of the holder's
// session, whoever's node it was; and when its data changes (a Publish).
// So a Lock waiting behind a Curator holder is woken by its release
// without polling.
//
// # Guarantees and what breaks them
//
// The token of an acquisition is higher than every token of the key
// issued before it, and no two sessions hold a key at once, as long as
// the ensemble keeps its data (a quorum's data directories) and no one
// writes under the root by hand. A holder's lease ends no later than the
// server's guarantee as long as Options.SessionTimeout is not above the
// timeout the server negotiated (the server may lower the timeout a
// client asks for to its maxSessionTimeout, 20 ticks by default: give
// Options the negotiated one), and the clocks of the client and the
// leader run at about the same rate. Curator holders are seen and
// excluded; their acquisitions are not in the last records (Inspect of
// a free key shows the last acquisition through this package).
//
// # URLs
//
// Importing the package registers the "zk" scheme with fence.OpenLocker:
//
//	zk://[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]...][/ROOT][?session-timeout=10s&connect-timeout=10s]
//
// The hosts are the ensemble's servers (port 2181 when missing); ROOT is
// Options.Root (DefaultRoot when missing); session-timeout (default 10 s,
// within the server's default limits of 4 s to 40 s) is asked of the server
// and taken as Options.SessionTimeout, so it must lie within the
// server's limits; the opener waits for a session up to connect-timeout
// (default 10 s). USER and PASSWORD are added as digest
// credentials (zk.Conn.AddAuth("digest", "USER:PASSWORD")); the nodes are
// created with the world ACL all the same. Errors never show the
// password.
package zookeeper
