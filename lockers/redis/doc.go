// Package redis keeps the leases of a *fence.Locker in Redis, driven
// through go-redis v9 (github.com/redis/go-redis/v9): a single server, a
// primary with replicas behind Sentinel, or a cluster. New returns the
// Locker over a client of the caller's; fence.OpenLocker opens one from a
// URL (below).
//
// Every method is one Lua script, run with EVALSHA (and EVAL once, when
// the server has not cached the script yet: go-redis's Script.Run), so one
// round trip: an acquire and a release are two. Scripts run atomically on
// the server, so each operation is one conditional step, never a check
// followed by a write. Whether a key is held is decided by the server's
// clock: a lease is a key with a PX expiry that the server measures, and
// remaining times come back as PTTL, so clock skew between machines does
// not matter, only clock rates do.
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence, and
// resources/redis for fenced values in Redis itself). Read "Failover"
// below before relying on tokens from a replicated Redis.
//
// # Records
//
// For a key K and the prefix P (Options.Prefix, default DefaultPrefix,
// "fence:"), the locker keeps two Redis keys, whose hash tag {K} puts them
// in one cluster slot:
//
//   - P{K}:lock, a string "TOKEN:OWNER" with a PX expiry: the current
//     lease. It exists exactly while the key is held. Release and Break
//     delete it; expiry removes it.
//   - P{K}:token, a hash, without expiry, never deleted: n, the counter
//     (every token issued is at most n); token and owner, the last token
//     issued and its owner (which Inspect reports for a free key); and,
//     once a holder published a value (Locker.Publish), value and vtoken,
//     the value's bytes and the token of the lease it was published with.
//
// Acquire, when P{K}:lock is absent, increments n, issues it as the
// token, records it with the owner in the hash (one HSET) and sets
// P{K}:lock with PX TTL (a TTL is rounded up to a whole millisecond); when P{K}:lock is
// present it writes nothing and answers the holder's token, owner and PTTL,
// which become the *fence.HeldError. Renew extends P{K}:lock by the TTL
// (PEXPIRE) only if it still holds the lease's TOKEN:OWNER; Release
// deletes it only then (compare-and-delete), otherwise both answer
// fence.ErrNotHeld. Inspect reads both keys.
//
// Break deletes P{K}:lock whoever holds it and sets n to one more than the
// larger of n and the token in P{K}:lock. The next Acquire issues n + 1, so
// its token is higher than the broken holder's, and higher than every
// token issued before, because n never decreases and every token issued
// was n at the time. Taking the larger of the two also covers a counter
// that fell behind the lock key's token (a hash deleted or restored from
// an older backup while the lease lived): Break then still moves the next
// token past the holder's. Tokens are 1 to 2^63-1 (HINCRBY's range).
//
// On a free key, the acquire script sends three commands inside the
// server (HMGET of the counter, SET NX of the lock key, HSET), four on a
// key's first acquisition (EXISTS); it reads the lock key only when SET NX
// finds it, held or corrupt. The release script sends four (GET, PTTL,
// DEL, PUBLISH). Against a lock without a token, the price of the token
// is the counter's read and write and the scripts' checks of the records,
// in server time, not in round trips: see BenchmarkMatrixServer and
// docs/benchmarks.md for the server time per acquire and release against
// redsync's and against the least pair of scripts that keeps a counter.
//
// A record the scripts did not write is reported as a *fence.CorruptError
// (matching fence.ErrCorrupt) and is never written over: a lock key that
// is not a string, or not "TOKEN:OWNER" with a decimal token, or has no
// expiry; a counter that is not a hash, or whose n or token is not a
// decimal, or whose token is above n. Fix such a record by hand: never
// lower n or delete the hash, which makes the key's tokens start again.
// For the same reason, run Redis with a maxmemory-policy that never
// evicts keys without expiry (noeviction or a volatile-* policy; allkeys-*
// policies may evict a counter), and never FLUSHDB a database that holds
// counters.
//
// # Failover
//
// Redis replication is asynchronous. A script's writes are acknowledged
// to the client by the primary before any replica has them, so when the
// primary fails and Sentinel (or a cluster) promotes a replica, the
// promoted replica may lack the last increments of a counter: it issues a
// token again that the old primary had already handed out, and two
// holders then carry the same token; a resource that accepted the first
// holder's writes accepts the second's too. TestFailoverReissuesToken
// shows it on a real primary, replica and three Sentinels. Persistence
// does not help here: the promoted replica never received the write, on
// disk or not.
//
// What the settings do and do not fix:
//
//   - Options.MinReplicas (URL min-replicas=N, with wait-timeout=D): each
//     Acquire, Renew and Break is followed, on the same connection and in
//     the same round trip, by WAIT N D, which blocks until N replicas have
//     acknowledged the connection's writes or D passes. An Acquire that
//     fewer than N replicas acknowledged hands out no lease: it releases
//     the key again and returns a *ReplicationError (the token it wrote
//     is never used; the primary did write it). A Renew or Break is
//     applied on the primary and returns a *ReplicationError too. An
//     Inspect writes the counter back unchanged and WAITs the same way,
//     and reports a holder fewer than N replicas acknowledged as a
//     *ReplicationError: an Acquire whose answer was lost is reconciled
//     by Inspect (fence.Session does), and must not be taken up unless
//     replicated (TestFailoverWaitLostAnswerNotTakenUp). This
//     makes a reissued token much less likely, as
//     TestFailoverWaitHandsOutNoUnreplicatedToken shows, but it is not
//     consensus, and the Redis documentation says WAIT does not make
//     Redis strongly consistent: a replica that acknowledged may not be
//     the one promoted (Sentinel prefers the replica with the most data,
//     but may pick another, for example when the best one is
//     unreachable), a replica acknowledges receipt, not a write to its
//     disk, and a replica that restarts without persistence comes back
//     empty. With N = the number of replicas, every one of them has each
//     token before it is used, at the price that an Acquire fails while
//     any replica is down. WAIT costs nothing in round trips, but an
//     Acquire waits for the slowest replica it counts.
//   - min-replicas-to-write and min-replicas-max-lag (server settings)
//     make the primary refuse writes (the script fails with NOREPLICAS)
//     while fewer than that many replicas are connected with at most that
//     lag. They bound how far a primary cut off from its replicas goes on
//     issuing tokens, but a write accepted a moment before the primary
//     fails is still lost; they do not replace WAIT.
//   - appendonly yes with appendfsync always (server settings) make the
//     counters survive a crash and restart of one server, as
//     TestConformancePersistent shows (its Restart kills the server with
//     SIGKILL). With appendfsync everysec up to a second of tokens is lost
//     on a crash and can be reissued after the restart; without
//     persistence a restart loses every counter. They do nothing for a
//     failover.
//
// Where tokens must never repeat across the loss of a server, use a store
// with consensus (lockers/etcd, lockers/postgres with synchronous
// replication) or lockers/redlock over independent masters, whose tokens
// hold while a majority of the masters keep their data.
//
// # Renewals
//
// The store is a driver.BatchRenewer: a fence.Session's renewal round
// sends the renew script of every due lease in one pipeline, so a round
// is one request to each server holding some of the keys (a
// *goredis.ClusterClient sends one pipeline per node), whatever the
// number of leases; with MinReplicas one WAIT ends each server's
// pipeline. The server still runs one script per lease, each
// extending its own lock key as Renew does, so a lease lost to expiry or
// Break is reported for that handle alone. TestSessionRenewalRequests
// counts the requests of a round at 1, 100 and 1,000 leases.
//
// # Public values
//
// Publish runs one script: if P{K}:lock still holds the lease's
// TOKEN:OWNER, it sets the hash fields value and vtoken (HSET) and
// PUBLISHes the key on the release channel as a release does, so that
// waiters and an election's followers look again; otherwise it answers
// fence.ErrNotHeld. Inspect reports value only while P{K}:lock holds
// vtoken's token, so a value ends with its lease; the fields stay until
// the key's next Publish. A vtoken that is not a decimal, or one without
// a value, is reported with fence.ErrCorrupt by Inspect of a held key.
// Acquire, Renew and Release do not read the fields and send what they
// sent without them. Publish does not WAIT for replicas, even with
// Options.MinReplicas: no token depends on a value, and a value lost in a
// failover is gone with nothing worse than a follower that sees none
// until its leader publishes again.
//
// # Multi-key locks
//
// fence.Session.LockAll takes its keys with one script that names every
// key's two records in KEYS: it reads them all, and only when every key
// is free it sets each lock key and counter as Acquire does, each key's
// token from its own counter; else it writes nothing and answers the
// first busy key's holder (a fence.HeldError). A single server (or a
// Sentinel-managed primary) runs any such set. A Redis Cluster runs a
// script on the keys of one hash slot only: with a *goredis.ClusterClient
// the set's keys must share a slot, and they do when each key K starts
// with the same "{tag}" (the hash tag of P{K}:lock is then "{tag" for
// every K); LockAll of keys in different slots (and any LockAll on a
// *goredis.Ring) takes the keys one at a time in order instead, which
// the Session does by itself. With Options.MinReplicas, WAIT follows the
// script, and a set too few replicas acknowledged is released and
// reported as a *ReplicationError.
//
// # Release notifications
//
// A fence.Session.Lock waiting for a key on this locker does not poll: the
// store is a driver.ReleaseNotifier. Release and Break PUBLISH the key on
// the channel P + "released" ("fence:released" by default) from the
// script that frees it, as Publish does from its script. Each Locker keeps one Pub/Sub connection
// subscribed to that channel while anyone waits, and NotifyRelease returns
// once the server has confirmed the subscription. Every waiting locker of a
// prefix receives every release of that prefix. After a lost connection
// go-redis subscribes again; releases published in between are lost, so
// every waiter is woken to ask the server again.
//
// A lease that expires sends nothing (unless keyspace notifications are
// configured, which this package does not use): Redis removes the key
// without running anything of ours. A waiter knows the holder's expiry
// from the fence.HeldError of its last attempt, and tries again just after
// it. Pub/Sub messages are not replicated history: a release published
// just before a failover may be lost with it, and the waiter then also
// falls back to the expiry.
//
// # Clients
//
// New takes any goredis.UniversalClient: *goredis.Client (also the
// Sentinel-aware one of NewFailoverClient), *goredis.ClusterClient, or a
// Ring. Options.MinReplicas needs a *goredis.Client or a
// *goredis.ClusterClient: WAIT counts only the writes of the connection it
// runs on, so the locker sends it in one pipeline with the script, on the
// connection to the key's primary (MasterForKey for a cluster).
//
// The Locker's As gives the client, to a *goredis.UniversalClient: the
// one given to New, or the one the URL opener made.
//
// # Ambiguous outcomes
//
// When a call fails after its script was sent (a timeout, a lost
// connection), the server may have run it. go-redis resends a command
// whose connection failed (MaxRetries): a resent Acquire that had run
// finds the key held by its own owner and returns a *fence.HeldError with
// that owner. A Release is sent once, never resent (resent, one that had
// run would answer fence.ErrNotHeld): its lost answer is the connection's
// error, and the key is free or frees itself at the lease's expiry.
// Never assume an ambiguous call did not happen: Inspect the key (an
// Acquire with fence.AcquireOptions.Owner set shows whether that owner got
// it), or wait for the lease to expire.
//
// # Opening from a URL
//
// Importing the package registers the URL schemes "redis", "rediss" and
// "redis+sentinel" with fence.OpenLocker:
//
//	redis://[USER[:PASSWORD]@]HOST[:PORT][/DB][?prefix=P&min-replicas=N&wait-timeout=D&...]
//	rediss://... (TLS)
//	redis+sentinel://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT...]/MASTER[/DB][?...]
//
// prefix, min-replicas and wait-timeout are Options.Prefix,
// Options.MinReplicas and Options.WaitTimeout; every other parameter is
// go-redis's (dial_timeout, read_timeout, pool_size, ...: see
// goredis.ParseURL and goredis.ParseFailoverURL). For redis+sentinel the
// hosts are the Sentinels, MASTER the name they monitor the primary by,
// and the user and password the data nodes' (Sentinels without
// authentication; for Sentinels with a password, make the client with
// goredis.NewFailoverClient and call New). A password in the URL is
// accepted but discouraged (command lines are visible in ps); no error
// shows it. The opened locker's Close closes the client it made.
package redis
