// Package azblob keeps the leases of a *fence.Locker in Azure Blob Storage
// leases, driven through the Azure SDK for Go
// (github.com/Azure/azure-sdk-for-go/sdk/storage/azblob). New returns the
// Locker over a container client of the caller's; fence.OpenLocker opens
// one from a URL (below).
//
// Each key is one empty block blob in a container, named by the key
// verbatim (see "Keys" for the names refused). The blob's metadata
// holds the fencing token (a counter that only grows), the owner of the
// last lease and that lease's duration. Blobs are never deleted: releasing
// or breaking a lease leaves the blob and its counter, so the next token
// continues the sequence. Do not delete the blobs or edit their metadata by
// hand; a deleted blob restarts its key's tokens at 1, and a token that is
// not a number makes every later Acquire fail with fence.ErrCorrupt.
//
// # Layering
//
// The Locker is the *fence.Locker over this package's store (a
// driver.Locker). The portable layer checks keys, owners, TTLs and
// leases against the driver's limits, generates owner ids, sets
// Lease.ValidUntil, refuses Renew and Release of a lease that ran out on
// its Clock, and wraps every error as "fence/azblob: <op> "<key>":
// <cause>". The store adds Azure's own rules on input (blob names, owner
// ids Azure metadata holds, whole seconds) and does the store's part: the
// blob and lease requests below, the derivation of lease ids, the mapping
// of Azure's error codes, and settling requests whose answers were lost.
// A missing container gives an error matching fence.ErrStoreMissing (and
// bloberror.ContainerNotFound); the Locker's Create creates it. The
// Locker's As gives the container client, to a **container.Client: the
// one given to New, or the one the URL opener made.
//
// # Keys
//
// Keys are used verbatim as blob names (readable in Azure's tools), so
// names that the service or HTTP would change, and two keys would then
// share one blob, are refused with an error matching fence.ErrInvalid
// instead, before any request:
//
//   - empty, more than MaxKeyLen bytes, invalid UTF-8, NUL (as on every
//     backend);
//   - control characters (U+0001–U+001F, U+007F–U+009F) and the
//     non-characters U+FFFE and U+FFFF, which Azure advises against;
//   - a backslash, which Azure treats as a '/';
//   - an empty path segment (a leading or trailing '/', or "//"), a
//     segment "." or "..", or a segment ending in '.', which URL handling
//     removes or folds (Azure: "no path segments should end with a dot");
//   - more than 254 '/'-separated segments, Azure's limit.
//
// Everything else, including '%', spaces, '?' and '#', is escaped on the
// wire by the SDK and names a blob of its own.
//
// # Opening from a URL
//
// Importing the package registers the scheme azblob with
// fence.OpenLocker:
//
//	azblob://CONTAINER[?account=A&endpoint=URL&probe-interval=D|off]
//
// CONTAINER is the container of the lock blobs (an Azure container name:
// 3 to 63 lower-case letters, digits and single hyphens), account the
// storage account (3 to 24 lower-case letters and digits), and endpoint
// the blob service URL, for Azurite or a private endpoint (default:
// https://ACCOUNT.blob.core.windows.net). The container's URL is the
// endpoint, "/", CONTAINER. probe-interval is Options.ProbeInterval, a
// duration such as 250ms, or off.
//
// Credentials come from the environment: EnvConnectionString when the URL
// has neither account nor endpoint; otherwise the account (from the URL,
// or EnvAccount) with EnvAccountKey, or else EnvSASToken. A URL with an
// endpoint but no account, where EnvAccount is unset, takes the account
// and its key (or SAS token) from EnvConnectionString, setting aside the
// string's endpoints: one connection string serves several Azurite
// instances of the same account. The opened locker's Create creates the
// container. fence.OpenOptions.HTTPClient, when set, carries the SDK's
// requests; fence.OpenOptions.Clock is Options.Clock.
//
// # How a lease is taken
//
// Acquire reads the blob (creating it with If-None-Match: * the first time,
// so concurrent creators cannot overwrite each other), then takes a blob
// lease with If-Match on the ETag it read: the atomic conditional step is
// the service's lease acquisition, which fails with LeaseAlreadyPresent
// while another lease is active. Right after, still under the lease, it
// writes the incremented token with the lease id and If-Match on the same
// ETag (lease operations do not change a blob's ETag). Tokens therefore only
// move under a lease, and each increment is a compare-and-swap from the
// value read: two acquirers can never issue the same token, even if one of
// them paused past its lease. If the increment fails, Acquire releases the
// lease and returns the error; no token was issued.
//
// # Lease ids
//
// Azure identifies a lease by a UUID that the acquirer proposes. This
// package derives it from the key, the owner, the token being issued and
// the TTL (see LeaseID), so owner ids need not be UUIDs, and every
// acquisition has a lease id of its own: a lease value with another owner,
// token or TTL than the one issued has another lease id and is refused by
// the service itself, and an Acquire retried by the owner that already
// holds the key proposes the next token's id and loses (fence.ErrHeld),
// as the contract wants. An Acquire retried after a failure between the
// lease and the token increment proposes the same id, which Azure accepts,
// and completes the first attempt.
//
// # Owner ids are secrets
//
// Since the lease id is a function of the key, the owner, the token and
// the TTL, and all but the owner are printed freely, the owner id works
// as a credential: whoever has it and the container's write permission can
// renew or release the holder's lease, with Azure's tools or with a
// fence.Lease built by hand. Package fence therefore never prints an
// owner id: Lease, LockInfo and HeldError print it as
// fence.OwnerFingerprint, no error text names it, `fence inspect` shows
// the fingerprint, and the fenceotel logs and spans leave it out.
//
// The lease id deliberately depends on nothing more than those four
// values. A secret of the Locker's mixed into it (a key given in
// Options) would hide the lease from a reader of the blob's metadata
// (fenceowner) only, and that reader is no outsider: Azure requires the
// write permission for every lease operation (acquire, renew, release,
// break), and whoever has it can break any lease, no lease id needed, so
// the lease id protects a holder from mistakes of other fence programs,
// not from an adversary with the container's credentials. The secret
// would cost more than it gives: Acquire recomputes the holder's lease id
// from the metadata to tell who holds a key (the HeldError names the
// holder only when that read succeeds), a fresh process reusing an owner
// id must find its predecessor's lease, operators need LeaseID to act
// with Azure's tools, and every process sharing a container would need the
// same secret, or fail to see each other's leases, with a changed
// derivation breaking the leases taken by older versions. Keep owner ids
// out of logs, and give the container's write permission only to what
// should be able to break leases.
//
// # Expiry
//
// The service measures expiry: leases last 15 to 60 whole seconds (MinTTL,
// MaxTTL); other durations are refused with fence.ErrInvalid. Infinite
// leases are not offered, since a holder that dies would keep the key
// until an operator breaks it. Azure lets the holder renew or release its
// own lease after expiry as long as nobody took it since; the contract
// does not, and the portable Locker refuses Renew and Release of a lease
// whose latest ValidUntil (send time + TTL on the locker's Clock) has
// passed with fence.ErrNotHeld, without asking the service. Azure does not
// report when a lease ends, so HeldError.ValidUntil and
// LockInfo.ValidUntil are zero.
//
// # Waiting
//
// Azure cannot tell a client that a lease ended, so a Locker probes: while
// a fence.Session.Lock of this Locker waits for a key, the Locker reads
// the properties of the key's blob (Get Blob Properties, a HEAD request)
// every Options.ProbeInterval (default 100 ms), and wakes the waiter when
// the lease state shows the lease released, broken or expired, the
// metadata shows another owner, or the holder published another value
// (see "Public values"), whichever client did it. The read is not
// conditioned on the ETag: lease operations leave the ETag as it is.
// Waiters of one key in one Locker share one probe, which stops when the
// last of them stops waiting; a wait starts with one such read, before
// the first attempt. A crashed holder's lease ends when the service says
// so, which the next probe sees.
//
// Expect a hand-off (the holder's release returns, the waiter's Lock
// returns) of half a probe interval on average, at most a whole one, plus
// four round trips (the probe, and the waiter's read, lease and token
// write). Measured on Azurite with the defaults (BenchmarkHandOff, 200
// hand-offs): p50 55 ms and p99 384 ms (Azurite's own slow answers),
// against 719 ms and 980 ms with probes off.
//
// The cost: one Get Blob Properties per waited-for key per probe interval
// per Locker, 10 a second at the default, whatever the number of waiters
// in that Locker; nothing while nobody waits. Several processes waiting
// for one key each probe it, and Azure documents a target of about 500
// requests a second for one blob. Set ProbeInterval (probe-interval in a
// URL) longer to read less, or negative (off) to poll at
// fence.SessionOptions.PollInterval instead.
//
// # Break
//
// Break breaks the lease at once (break period 0) and then takes and
// releases the blob under a fresh random lease id, because Azure lets the
// broken holder release a broken lease with its old id: after Break, the
// broken holder's Renew and Release answer fence.ErrNotHeld. The next
// Acquire increments the counter, so its token is higher.
//
// # Public values
//
// Locker.Publish (Handle.Publish) keeps a value of up to fence.MaxValueLen
// bytes with a lease, for an election's followers, in the blob's
// metadata: fencevalue holds it in standard base64 (metadata values are
// HTTP header text, so any bytes must be encoded) and fencevaluetoken the
// token of the lease it was published with. Publish reads the blob's
// properties under the lease's id, which the service refuses unless that
// very lease is the blob's, and replaces the metadata (keeping every
// other entry) under the same lease id with If-Match on the ETag read:
// two requests. A Publish of "" removes both entries, and the next
// Acquire's token write drops them. Inspect reports the value only while
// a lease is active and only when fencevaluetoken is the blob's token.
// The lease and its expiry are the service's and do not change with a
// Publish. The probes of waiting Lockers (see "Waiting") read the
// metadata and wake their waiters when the value changes. Blobs of
// earlier releases need nothing new: metadata has no schema.
//
// # Several keys at once
//
// Azure has no operation that takes several blob leases at once, so
// fence.Session.LockAll takes the keys one at a time in a global order and
// releases what it took when one is busy: the set is all or nothing for
// the caller, but not one atomic step in the store (another process may
// see part of it held for a moment).
//
// # Round trips
//
// Acquire: 3 on a known key (read, lease, increment), 4 the first time;
// a lost Acquire: 2 or 3, and it writes nothing. Renew and Release: 1.
// Inspect: 1 on a free key, 2 on a held one (the second tells whether
// the active lease is the recorded holder's; up to 8 while an acquirer
// writes its token). Break: 3 on a held key, 1 on a free one. Publish: 2.
//
// # Ambiguous outcomes
//
// A request whose answer was lost may have been applied. Acquire settles
// its own steps with the store: after a lease request without an answer it
// re-reads the blob with the proposed lease id as a condition (the read
// succeeds only if that lease is active), and after an increment without
// an answer it re-reads the token and owner; what it cannot settle while
// ctx lasts it undoes by releasing the lease with its id (harmless if the
// lease is not ours). When ctx ends, the method returns an error that the
// portable Locker makes wrap ctx.Err(), and the caller reconciles with
// Inspect, as the contract says.
// The SDK's own retries are safe: a repeated lease request with the same
// proposed id succeeds on our own lease, a repeated increment fails its
// If-Match and is recognised, a repeated Renew is a renewal. A repeated
// Release answers fence.ErrNotHeld (the lease is already free).
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence).
//
// # The stored blob
//
// One empty block blob per key, named by the key, never deleted. Its
// metadata (names are case-insensitive; Azure returns them capitalised,
// as Fencetoken):
//
//   - fencetoken: the last token issued, in decimal; "0" from the blob's
//     creation until its first Acquire. Only Acquire raises it.
//   - fenceowner: the owner id of the last lease; absent while the token
//     is 0.
//   - fencettl: that lease's duration in whole seconds, 15 to 60; absent
//     while the token is 0.
//   - fencevalue and fencevaluetoken: the value last published (base64)
//     and the token of its lease; absent until a Publish, dropped by the
//     next Acquire. A value of another token than fencetoken is ignored.
//
// Other metadata on the blob is kept on every rewrite. Whether the key is
// held is the blob's own lease state (leased or breaking: held), timed by
// the service. The lease's id is LeaseID(key, fenceowner, fencetoken,
// fencettl seconds): a version 8 UUID made of the first 16 bytes of the SHA-256
// of the string "fence/azblob lease v1", the key and the owner (each
// preceded by its length in bytes as 8 bytes big-endian), then the token
// and the TTL in nanoseconds (8 bytes big-endian each). With it Azure's
// own tools can act on the lease. To free a key, call Break: a lease
// broken with Azure's tools alone can still be released by its holder.
// Metadata reported corrupt is repaired by setting the three names above
// consistently, with a token no lower than the last one issued.
//
// # Emulators
//
// The package is tested on Azurite; CONTRIBUTING.md lists where Azurite
// differs from Azure.
package azblob
