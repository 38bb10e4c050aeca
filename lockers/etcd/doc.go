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
//     attached to the acquiring Locker's shared etcd lease of the
//     acquisition's TTL (see Shared leases), so the server deletes it at
//     the latest when that lease expires. Its create revision is the
//     lease's fencing token.
//   - P + "last/" + K, the last record: "fence1:" and the owner id of the
//     last acquisition, attached to no lease and never deleted. Written in
//     the transaction that creates the lock record, its mod revision is
//     the last token issued, which Inspect reports for a free key.
//
// A key whose holder published a value (Locker.Publish) has a third:
//
//   - P + "value/" + K, the value record: "fence1:", the token of the
//     lease the value was published with, ':' and the value's bytes;
//     attached to no lease. Inspect reports the value only while the
//     lock record holds that token, so a value ends with its lease
//     although the record stays until the key's next Publish.
//
// The "held/", "last/" and "value/" parts keep them apart whatever the key:
// "last/x" and "x" are different lock keys with different records. Do not
// write keys under P by hand; to free a key, do what Break does (delete
// the lock record; never revoke its etcd lease, which holds other keys).
// A lock record whose value is not of this form, or that is attached to
// no lease, and a last record of another form or attached to a lease,
// are reported with fence.ErrCorrupt;
// Acquire, Renew and Release never write over them. (Acquire does not
// read the last record: it writes it anew when it takes the key.) With
// etcdctl:
//
//	etcdctl get --prefix fence/locks/held/     # who holds what; -w json shows create revisions and leases
//	etcdctl lease timetolive --keys LEASE      # time left and the records on it; LEASE in hex from the json above
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
// record lives at most as long as its etcd lease, which the leader
// expires (see Shared leases for the Locker's own deletes). The
// Lease.ValidUntil the holder gets is the send time of its request plus
// TTL on Options.Clock, earlier than the server's end of the lease; the
// expiry in a fence.HeldError or fence.LockInfo is the send time of a
// lease time-to-live question plus the whole seconds it answers (the
// server rounds down), less the second of slack.
//
// etcd leases last whole seconds: a TTL is rounded up to the next second
// (a 2.5 s TTL is a 3 s etcd lease), and the leader looks for expired
// leases twice a second, so a key whose lease ends becomes free up to
// about half a second after that (plus the commit of the revocation).
// The server also raises every lease to at least 1.5 election timeouts
// rounded up to a second: 2 s with its default election timeout of 1 s
// (DefaultMinTTL). Set Options.MinTTL to the server's own minimum; an
// Acquire whose shared lease (the TTL and one second, see below) the
// server lengthens anyway is refused with fence.ErrInvalid rather than
// held longer than asked.
//
// # Shared leases
//
// A Locker attaches every lock record it creates with the same TTL (in
// whole seconds) to one etcd lease of its own, as etcd's
// concurrency.Session does for its locks, so that keeping any number of
// them alive is one keepalive. The shared lease lasts the TTL and one
// second of slack: an Acquire made within a second of the shared lease's
// latest keepalive (or grant) gives its record a full TTL on the server
// without a keepalive of its own; a later one keeps the lease alive
// beside its transaction. Each record keeps its own TTL: the Locker
// remembers, for each record it created, when its latest acquisition or
// renewal was sent, and deletes the record (compare-and-delete, on a
// timer) once its TTL has passed since then, while the shared lease
// lives on for the records that are renewed. What this means:
//
//   - A lease nobody renews any more (a bare Locker.Acquire never
//     renewed; a handle its fence.Session declared lost while the
//     session's other handles are renewed) ends in the store when its
//     TTL has passed since its last acquisition or renewal, plus the
//     commit of the delete; the tests check it within the TTL and a
//     second. Renew a lease through the Locker that acquired it, as a
//     Session does: a Locker knows the TTLs of its own records only. A
//     record renewed through another Locker is moved to that Locker's
//     shared lease (a put that keeps its create revision, so its token).
//   - Break deletes the lock record only. It never revokes an etcd lease:
//     that would free every other key on it.
//   - A process that stops (a crash, a kill, a pause longer than the TTL)
//     stops keeping its shared leases alive and stops its deletes: all
//     its records end together when the shared lease expires, at most the
//     TTL, rounded up to whole seconds, and one second after its last
//     keepalive (plus the leader's half-second expiry loop), as the tests
//     check. A record may thus outlive its own TTL by up to the second of
//     slack when its process dies.
//   - The expiry in a fence.HeldError or fence.LockInfo is the shared
//     lease's remaining time less the second of slack (for a record of
//     the Locker asked, its own end if sooner): an estimate that a record
//     of another Locker whose own TTL ends sooner can beat.
//
// # Calls
//
//   - Acquire runs one transaction (a raft write): if the lock record's
//     create revision is 0 (it does not exist), put it attached to the
//     shared lease and put the last record; else read the lock record.
//     The first Acquire of a TTL grants the shared lease (a raft write,
//     one more round trip), as does one that finds it with less than half
//     its life surely left; one made more than a second after the shared
//     lease's latest keepalive keeps it alive at the same time. A busy
//     key costs one more round trip: asking the holder's lease its time
//     to live for the fence.HeldError.
//   - Renew and RenewBatch (a fence.Session's keepalive renews all its due
//     leases in one RenewBatch call) send, for the leases this Locker
//     acquired, two requests per shared lease, together, whatever their
//     number: a keepalive of the shared lease (the leader restarts its
//     TTL; no raft write), and one check that the records are still
//     there: a transaction reading them (a linearizable read) when there
//     are at most 100, else the keys attached to the shared lease (etcd's
//     lease time-to-live with its keys, which the leader answers once it
//     has applied every committed write). A record deleted by Release,
//     Break, the Locker's delete or expiry is no longer attached; another
//     holder's record is attached to another lease; the Locker's own
//     later record of the key has another token, which it knows. A lease
//     acquired by another Locker, or after a lost answer, or whose record
//     is not found attached, is read (100 records per transaction) and
//     checked by its token and owner.
//   - Release is one transaction (a raft write) that deletes the lock
//     record if its create revision is the lease's token and its value
//     names the lease's owner: compare-and-delete. The shared lease stays.
//   - Break deletes the lock record whoever holds it.
//   - Inspect reads both records in one transaction and, when the key is
//     held, asks its lease's time to live.
//
// A lease whose record is gone, or holds another token or owner, or whose
// etcd lease ended, gets fence.ErrNotHeld from Renew and Release.
//
// An acquisition and a release of a free key cost two raft writes and
// two round trips, as a concurrency.Mutex's TryLock and Unlock on a
// long-lived session do.
//
// # Public values
//
// Publish is one transaction (a raft write): if the lock record's create
// revision is the lease's token and its value names the lease's owner, it
// puts the value record and puts the lock record again unchanged, keeping
// its etcd lease, its create revision and so its token; the release
// watches (below) see that put, so waiters and an election's followers
// wake on a Publish as on a release. Otherwise it answers
// fence.ErrNotHeld. A value record that does not parse is reported by
// Inspect with fence.ErrCorrupt while its key is held. Acquire, Renew and
// Release do not touch the value record and cost what they did without
// it.
//
// # Multi-key locks
//
// fence.Session.LockAll takes up to MaxMultiKeys (64) keys in one
// transaction, all or nothing: it compares every lock record's create
// revision with 0, and puts every lock record (on the shared etcd lease)
// and last record, or reads the lock records and writes nothing. Every key
// of the set gets the transaction's revision as its token: above each
// key's earlier tokens, as for one key. A busy key gets a
// fence.HeldError naming it. A larger set, or a transaction the server
// refuses as too large (a --max-txn-ops below 128), is taken one key at a
// time in order by the Session.
//
// # Release notifications
//
// A fence.Session.Lock waiting for a key on this locker does not poll: the
// store is a driver.ReleaseNotifier that watches the key's lock record
// for deletions, which a Release, a Break and the expiry of the holder's
// lease all are, whichever process made them, and for the put of a
// Publish (the put that creates the record wakes nobody). NotifyRelease returns once
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
// lease it finds). A record such an Acquire may have created is deleted
// by the Locker once its TTL has passed unless it is renewed, and ends
// with the shared lease otherwise. After an ambiguous Release or Renew, repeat
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
