// Package etcd keeps the leases of a fence.Locker in an etcd cluster (v3
// API), driven through go.etcd.io/etcd/client/v3: New returns the
// *fence.Locker over a client. The Locker's As gives that client (the one
// given to New, or the one a URL opener made) to a **clientv3.Client.
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence).
//
// # Key layout
//
// Each lock key K has two etcd keys under the locker's prefix P
// (Options.Prefix, default DefaultPrefix, "fence/locks/"):
//
//   - P + "held/" + K, the lock record: exists exactly while K is held.
//     Its value is "fence1:" followed by the holder's owner id; it is
//     attached to an etcd lease of the acquisition's TTL that holds no
//     other key, so the server deletes it when that lease expires. Its
//     create revision is the lease's fencing token.
//   - P + "last/" + K, the last record: "fence1:" and the owner id of the
//     last acquisition, attached to no lease and never deleted. Written in
//     the transaction that creates the lock record, its mod revision is
//     the last token issued, which Inspect reports for a free key.
//
// The "held/" and "last/" parts keep the two apart whatever the key:
// "last/x" and "x" are different lock keys with different records. Do not
// write keys under P by hand; to free a key, do what Break does (delete
// the lock record, revoke its lease). A lock record whose value is not of
// this form, or that is attached to no lease, and a last record of
// another form or attached to a lease, are reported with fence.ErrCorrupt;
// Acquire, Renew and Release never write over them. (Acquire does not
// read the last record: it writes it anew when it takes the key.) With
// etcdctl:
//
//	etcdctl get --prefix fence/locks/held/     # who holds what; -w json shows create revisions and leases
//	etcdctl lease timetolive LEASE             # time left, in hex from the json above
//
// # Tokens
//
// etcd numbers every change of its key space with a revision, a counter
// of the whole cluster that the raft log orders and that only grows. The
// create revision of a key is the revision of the write that created it;
// a key deleted and created again gets a new, higher one. Acquire creates
// the lock record only if it does not exist (one transaction comparing
// its create revision with 0), so each acquisition's token is the
// revision of its own write: higher than that of any acquisition of the
// key before it, across release, expiry, Break (which deletes the record)
// and server restarts. Renewals do not touch the record, so the token
// stays. Tokens of a key are not consecutive: every write to the cluster
// uses a revision.
//
// Compaction does not matter: it discards old revisions of keys, not the
// revision counter, nor the create revision of a key that exists, and the
// last records are never deleted.
//
// # Leases and time
//
// Whether a key is held is decided by the leader's clock: the lock
// record lives as long as its etcd lease, which the leader expires. The
// Lease.ValidUntil the holder gets is the send time of its request plus
// TTL on Options.Clock, earlier than the server's end of the lease; the
// expiry in a fence.HeldError or fence.LockInfo is the send time of a
// lease time-to-live question plus the whole seconds it answers (the
// server rounds down).
//
// etcd leases last whole seconds: a TTL is rounded up to the next second
// (a 2.5 s TTL is a 3 s etcd lease), so the server may hold a key up to a
// second longer than asked, and the leader looks for expired leases twice
// a second, so a key becomes free up to about half a second after that
// (plus the commit of the revocation). The server also raises every lease
// to at least 1.5 election timeouts rounded up to a second: 2 s with its
// default election timeout of 1 s (DefaultMinTTL). Set Options.MinTTL to
// the server's own minimum; an Acquire whose lease the server lengthens
// anyway is refused with fence.ErrInvalid rather than held longer than
// asked.
//
// # Calls
//
//   - Acquire runs one transaction (a raft write): if the lock record's
//     create revision is 0 (it does not exist), put it with an etcd lease
//     and put the last record; else read the lock record. The etcd lease
//     is a spare (see below), kept alive at the same time as the
//     transaction runs, so that its TTL restarts after the call started;
//     without a spare, a new lease is granted first (a raft write, one
//     more round trip). A busy key costs one more round trip: asking the
//     holder's lease its time to live for the fence.HeldError.
//   - Renew reads the lock record (a linearizable read), checks its create
//     revision and owner against the lease, and keeps its etcd lease alive
//     once (the leader restarts its TTL; no raft write). The renewals of
//     a fence.Session's keepalive read all the records in one transaction
//     and keep their leases alive on one stream: two round trips for any
//     number of leases.
//   - Release is one transaction (a raft write) that deletes the lock
//     record if its create revision is the lease's token and its value
//     names the lease's owner: compare-and-delete.
//   - Break deletes the lock record whoever holds it and revokes its lease.
//   - Inspect reads both records in one transaction and, when the key is
//     held, asks its lease's time to live.
//
// A lease whose record is gone, or holds another token or owner, or whose
// etcd lease ended, gets fence.ErrNotHeld from Renew and Release.
//
// Spare leases: the etcd lease of a released lease, or one granted for an
// Acquire that found the key held, holds no key afterwards; the Locker
// keeps up to eight per TTL (in whole seconds) and reuses the newest for
// its next Acquire of that TTL while at least half its TTL is surely left
// (counted from the send time of its last grant or keepalive), so a key
// taken and freed again and again costs two raft writes, as a
// concurrency.Mutex on a long-lived session does. An etcd lease holds one
// record at a time: a spare holds nothing until it is reused, and is
// never shared between Lockers. Spares not reused expire on the server
// within their TTL. (A Renew that races with the Release of the same
// lease may keep its etcd lease alive just after the next Acquire reused
// it: that lease then lasts one TTL from then, as renewed.)
//
// # Release notifications
//
// A fence.Session.Lock waiting for a key on this locker does not poll: the
// store is a driver.ReleaseNotifier that watches the key's lock record
// for deletions, which a Release, a Break and the expiry of the holder's
// lease all are, whichever process made them. NotifyRelease returns once
// the server confirmed the watch (etcd's created notification), so no
// release after it returns is missed. The client resumes a watch across a
// lost connection or a restarted member from the last revision it saw;
// should the server end the watch (its member lost its leader: the watch
// requires one; or the revision was compacted), it is set up again and
// sends one possibly spurious notification, and the waiter asks again.
//
// # Leader failover
//
// A write is committed once a majority of the members has it in its log
// on disk, and only a member with every committed entry can become
// leader, so a leader's death loses no acquisition that was answered, and
// the next leader's revisions continue from the last committed one:
// tokens keep increasing across a failover, as the cluster test shows
// (it kills the leader of three members with SIGKILL while holders
// acquire, renew and release, and restarts it). The new leader extends
// every lease by an election timeout, so leases may outlast their TTL
// after a failover, never fall short of it. Requests in flight when the
// leader dies can time out after they were committed: see Ambiguous
// outcomes.
//
// # What breaks the guarantees
//
//   - Restoring a snapshot (etcdutl snapshot restore) rewinds the
//     revision to the snapshot's, so tokens issued since are issued again;
//     restore with --bump-revision (more than the writes since the
//     snapshot, for example 1000000000) and --mark-compacted.
//   - Losing a majority of the members' data, or forcing a new cluster
//     from a member that lagged (--force-new-cluster), can lose committed
//     writes, and with them revisions and tokens.
//   - --unsafe-no-fsync, or disks that acknowledge writes they did not
//     keep: a member that restarts without what it acknowledged.
//   - Writing or deleting keys under the prefix by hand.
//
// # Ambiguous outcomes
//
// When ctx ends, or the connection or the leader is lost, while a request
// is in flight, the method returns an error, but the cluster may still
// commit the request. Never assume it did not: after an ambiguous Acquire,
// Inspect the key (an Acquire with AcquireOptions.Owner set shows whether
// that owner got it; fence.Session does this and uses or releases the
// lease it finds); the etcd lease of such an Acquire is left to expire,
// since it may hold the key. After an ambiguous Release or Renew, repeat
// it: both are idempotent (a Release that had landed answers
// fence.ErrNotHeld).
//
// # Opening from a URL
//
// Importing the package registers the URL schemes "etcd" and "etcds"
// (TLS) with fence.OpenLocker:
//
//	etcd://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...][/PREFIX/][?dial-timeout=5s&min-ttl=2s]
//	etcds://HOST[:PORT],...[/PREFIX/][?ca=FILE&cert=FILE&key=FILE&...]
//
// The hosts are the cluster's client endpoints (port 2379 when none is
// given); the path, if any, is Options.Prefix (a slash is
// added at its end when missing); dial-timeout bounds the client's dial
// and authentication (default 5 s); min-ttl is
// Options.MinTTL. etcds:// speaks TLS with the system's roots, or those
// of the PEM file ca, and presents the client certificate of cert and key
// when given. A user and password are etcd's authentication: the client
// then authenticates at open; otherwise the first call contacts the
// cluster. A password in the URL is accepted but discouraged (command
// lines are visible in ps); no error shows it. The opened locker's Close
// closes the client it made; Create has nothing to create.

package etcd
