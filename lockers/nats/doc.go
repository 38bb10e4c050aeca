// Package nats keeps the leases of a fence.Locker in a NATS JetStream
// key-value bucket, driven through github.com/nats-io/nats.go's jetstream
// package: New returns the *fence.Locker over a jetstream.JetStream. The
// Locker's As gives that JetStream to a *jetstream.JetStream and its
// connection to a **nats.Conn.
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence).
//
// # Configure the server: sync on every write
//
// By default JetStream writes to its files at once but syncs them to disk
// only every two minutes, so a server whose machine crashes (a power
// loss, a kernel panic) can come back without writes it had acknowledged:
// an acquisition it confirmed is forgotten, and its revision, this
// package's token, is issued again to the next Acquire. A single server
// loses them on such a crash; a cluster when a majority of the bucket's
// replicas crash so together. Run every server that keeps a lock bucket
// with
//
//	jetstream {
//		store_dir: "/var/lib/nats"
//		sync_interval: always
//	}
//
// which syncs each write before it is acknowledged (what it costs is
// measured in the package's benchmarks). In a cluster, set it on every
// server: a write is acknowledged once a majority of the bucket's
// replicas stored it, and without syncs a majority may lose it together.
//
// A process crash alone (SIGKILL) loses nothing even without syncs: the
// operating system still holds what the server wrote, as
// TestUnsyncedServerKeepsAWriteAcrossAProcessCrash shows. It takes an
// operating-system crash or a power loss, which a test cannot cause;
// TestUnsyncedServerReissuesATokenAfterAPowerLoss puts the server's files
// back as the disk held them before an acknowledged acquisition and shows
// the next acquisition getting the same token: two holders with one
// token, which no fenced resource can tell apart.
//
// # The bucket
//
// A Locker keeps its records in one KV bucket (a stream named KV_ and the
// bucket's name): create it with the Locker's Create, CreateBucket, or
// the nats command (nats kv add BUCKET --history 1 --replicas 3). Use
// file storage, no TTL (the Locker refuses a bucket with one: the server
// would delete held records) and, in a cluster, 3 or 5 replicas
// (Options.Replicas for Create). A call on a bucket that does not exist
// gets an error matching fence.ErrStoreMissing. Do not write keys of the
// bucket by hand; to free a key, use Break (or fence break).
//
// # Keys
//
// Each lock key has one KV key, its bytes as they are where a KV key can
// hold them (ASCII letters and digits, '-', '/', '=', and '.' except at
// the start, the end and after another '.'), and every other byte written
// as '_' and two upper-case hex digits ("jobs/nightly report" is
// "jobs/nightly_20report", "a_b" is "a_5Fb"). The mapping is one to one,
// so similar keys never share an entry; a key of n bytes has a KV key of
// at most 3n (MaxKeyLen is 1024).
//
// # Records and tokens
//
// The value of a key's entry is a small JSON record: the state (held or
// free), the owner id, the lease duration, the token and, while held, the
// value published with the lease (Locker.Publish). Every change is a
// compare-and-set on the entry's revision: Create for a key never written
// (it fails when the key exists), Update with the revision last read
// otherwise (it fails when another write came since).
//
// The token is the revision of the write that acquired the lease: JetStream
// numbers every message of a stream with a sequence that only grows, and a
// KV revision is that sequence. The acquiring record cannot name its own
// revision, so it stores no token; every later record of the lease (a
// renewal, a Publish) and the free record that ends it (Release, Break)
// store it. The next Acquire writes a later message, so its token is
// higher than every token issued for the key before, across release,
// expiry, Break and server restarts. Tokens of a key are not consecutive:
// every write to the bucket uses a sequence number. The stream's last
// sequence survives deleting and purging keys, purging the whole stream
// and restarting the server (the tests check each); it does not survive
// deleting the bucket (or its stream) and creating it again, which starts
// again at 1: never do that to a bucket in use.
//
// # Expiry without clocks
//
// JetStream's own expiry does not fit a lease: a bucket TTL deletes every
// record after a fixed time whatever its writes, and a per-key TTL is set
// only when a key is created: an Update writes a revision without one,
// after which the key never expires (TestPerKeyTTLIsNoLease). So the
// server never ends a lease; each contender judges on its own clock, as
// lockers/dynamo does: a held record whose revision a Locker has seen
// unchanged for the lease duration stored in it, on its own monotonic
// clock, is expired for that Locker, which may then take it over with an
// Update on that revision (which fails if the holder renewed meanwhile).
// A renewal writes a new revision, which restarts every contender's wait.
// Clocks of different machines are never compared; only their rates
// matter. The Locker's driver.Info says ClockFree: a holder that crashed
// keeps its key for a contender until that contender has watched it for a
// whole lease, so a contender that tries once and exits never takes it
// over.
//
// # Calls
//
//   - Acquire writes once (Create, or Update on the revision this Locker
//     knows of the key: after its own Release, without reading first), and
//     reads the entry when it knows nothing of the key, or when the write
//     lost a race. A busy key costs one read (the HeldError names the
//     holder and the time this Locker will take it over).
//   - Renew, Release and Publish are one Update each on the revision this
//     Locker wrote last; when another Locker wrote the lease's record
//     since, it is read and written again.
//   - Break reads the entry and writes a free record keeping the token.
//   - Inspect reads the entry.
//
// Reads go to the stream's leader (the JetStream API's message get), not
// to the KV's direct get, which any replica of a bucket may answer with
// what it has applied so far: a contender, and the reconciliation of an
// ambiguous Acquire, see the latest acknowledged write. Each request is
// one round trip to the stream's leader; with sync_interval: always each
// write also waits for a disk sync (on a majority of the replicas in a
// cluster). A Locker binds the bucket on its first call (a stream-info
// and a status request).
//
// # Release notifications
//
// A fence.Session.Lock waiting for a key on this locker does not poll: the
// store is a driver.ReleaseNotifier that watches the key's entry (a KV
// watch: an ordered consumer of the bucket's stream filtered to the key),
// and wakes the waiter when the entry is released, broken, taken over,
// published, deleted, or when the held record has stayed unchanged for
// its lease on this Locker's clock. NotifyRelease returns once the
// server created the consumer, which delivers the latest revision first,
// so no release after it returns is missed.
//
// # Cluster failover
//
// In a cluster, a bucket of R replicas is a stream replicated with NATS's
// Raft: a write is acknowledged once a majority of the replicas has it,
// and only a replica with every acknowledged write can become the
// stream's leader, so a leader's death loses no acquisition that was
// answered and the next leader's sequence continues from the last one:
// tokens keep increasing across a failover, as the cluster tests show:
// one kills the stream leader of three servers with SIGKILL while
// holders acquire, renew and release, and restarts it; another runs the
// conformance suite on a bucket of three replicas, its store restart a
// leader kill. Requests in flight when
// the leader dies can time out after they were applied: see Ambiguous
// outcomes. While no leader is elected (a few seconds), calls fail; a
// fence.Session keeps its leases while its renewals fail, until their TTL
// runs out: use a TTL of several seconds in a cluster.
//
// # What breaks the guarantees
//
//   - A server without sync_interval: always that crashes (above).
//   - Deleting the bucket or its stream and creating it again: the
//     sequence, and with it the tokens, start again at 1.
//   - Restoring the stream from a backup taken before tokens were issued.
//   - Losing a majority of a replicated bucket's servers with their data.
//   - Writing, deleting or purging keys of the bucket by hand, or giving
//     the bucket a TTL or a maximum age.
//
// # Ambiguous outcomes
//
// When ctx ends, or the connection or the stream leader is lost, while a
// write is in flight, the method returns an error, but the server may
// still apply the write. Never assume it did not: after an ambiguous
// Acquire, Inspect the key (an Acquire with AcquireOptions.Owner set shows
// whether that owner got it; fence.Session does this and uses or
// releases the lease it finds). After an ambiguous Release or Renew,
// repeat it: a Renew that had landed is found by its owner and token and
// written again; a Release that had landed answers fence.ErrNotHeld.
//
// # Opening from a URL
//
// Importing the package registers the URL scheme "nats" with
// fence.OpenLocker:
//
//	nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT][,HOST[:PORT]...]?bucket=B[&replicas=N&creds=FILE&nkey=FILE&tls=true&ca=FILE&cert=FILE&key=FILE&dial-timeout=5s&name=CLIENT]
//
// The hosts are servers of one cluster (port 4222 when none is given);
// the client connects to one of them and learns the others from it.
// bucket names the bucket; replicas is Options.Replicas, for Create.
// Authentication is one of: a user and password, a token (a user name
// without a password, as NATS programs take it), creds (a credentials
// file: JWT and NKey seed, as `nats context` and NGS use) or nkey (a file
// holding an NKey seed). tls=true requires TLS, verified with the
// system's roots or those of the PEM file ca; cert and key present a
// client certificate (and imply tls=true). dial-timeout bounds the
// connection to each server (default 5 s); name is the client's name in
// the server's monitoring (default "fence"). The opener connects, and
// returns when connected or when its context ends; the client reconnects
// by itself after that, without end, trying a server every 250 ms (not
// nats.go's default 2 s, which would let short leases run out). A
// password or token in the URL is accepted but discouraged (command lines
// are visible in ps); no error shows it. The opened locker's Close closes
// the connection.
package nats
