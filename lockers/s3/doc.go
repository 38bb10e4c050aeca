// Package s3 keeps the leases of a *fence.Locker in an Amazon S3 bucket
// (or a store that honours S3's conditional writes), driven through
// github.com/aws/aws-sdk-go-v2/service/s3. It needs nothing but a bucket.
//
// New returns the *fence.Locker over this package's store, the
// driver.Locker that reads and conditionally writes one object per key.
// The portable layer does what every backend shares: it checks keys,
// TTLs, owners and leases, makes owner ids, checks ctx, times
// Lease.ValidUntil from its send time, refuses a Renew or Release of a
// lease that ran out on the local clock without asking the store, and
// wraps every error as "fence/s3: <op> "<key>": <cause>". The store keeps
// only what is S3's: the write conditions, retries and the reconciliation
// of lost answers; its judgement of expiry is the one lockers/dynamo and
// lockers/gcs use too. Make the Locker with New over the caller's client,
// or from a URL with fence.OpenLocker (see "Opening from a URL"):
//
//	import _ "github.com/fencekit/fence/lockers/s3"
//
//	locker, err := fence.OpenLocker(ctx, "s3://my-locks?prefix=locks/", nil)
//
// The Locker's As gives the client, to a **s3.Client: the one given to
// New, or the one the URL opener made. Its Create makes the bucket (one
// the account owns already is left as it is).
//
// Each key is one object of the bucket, named Options.Prefix + key,
// holding a small JSON record: the owner of the last lease, the fencing
// token (a number that only grows), the lease duration, whether the key
// is held and a random id of the write that produced it. Every write is
// one conditional PutObject: If-None-Match: * (the object must not exist)
// for a key seen for the first time, else If-Match on the ETag the Locker
// last saw. Acquire writes the next token under that condition, so of two
// Lockers that saw the same ETag exactly one succeeds and tokens never
// repeat. Because every record carries a fresh write id, no two writes
// have the same bytes, so no two versions have the same ETag (a
// single-part upload's ETag is the MD5 of its bytes; the tests check on
// MinIO that the same bytes written again get the same ETag, which the
// write id rules out). Objects are never deleted: Release and Break write
// a free record that keeps the token, and the next Acquire continues the
// sequence.
//
// Deleting an object by hand restarts its key's tokens at 1: a fenced
// resource that saw higher tokens then refuses every write of the new
// holders (fence.ErrStaleToken) until the tokens catch up, and an unfenced
// one cannot tell old holders from new. Do not delete the records, and
// give the bucket no lifecycle rule that expires them (rules that expire
// noncurrent versions or abort incomplete uploads are harmless). Keep
// versioning off, as on every new bucket: with it on, each renewal keeps
// the record it replaced as a noncurrent version.
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence). resources/s3 can
// share the bucket (give the two different prefixes).
//
// # Answers
//
// A write refused by its condition lost a race: 412 Precondition Failed,
// 409 ConditionalRequestConflict (S3's answer to a conditional write that
// overlapped another on the same key), or 404 NoSuchKey to If-Match (the
// object is gone). The Locker then reads the record again: an Acquire
// that finds it held reports a *fence.HeldError with the holder, one that
// finds it free tries again (at most three times); a Renew or Release
// that finds the lease no longer the record's returns a
// *fence.NotHeldError. NoSuchBucket gets an error matching
// fence.ErrStoreMissing, never "free". A key the store refuses (S3's
// KeyTooLongError, MinIO's invalid object names) gets fence.ErrInvalid.
//
// # Who measures expiry
//
// S3 has no clock a condition can read, so a Locker decides when another
// owner's lease has expired, in one of two ways, chosen with
// Options.TrustedClock.
//
// Clock-free (the default): a Locker takes a key over only after it has
// itself seen the same ETag, unchanged, for the full lease duration stored
// in the record, measured on its own monotonic clock. Clock skew between
// machines does not matter, only clock rates do. Acquire still tries once
// and never waits: the Locker remembers what it saw (the ETag of each
// object, its record, and since when it has been seen), so an Acquire or
// Inspect now starts the wait and a later Acquire takes the key over. A
// process that starts afresh, or a Locker that never looked at a key,
// waits a full lease from its first look, even if the holder died long
// ago. Every Renew writes a new ETag, so observers restart their wait.
// What a Locker saw counts for all its Sessions, but not for another
// Locker: a process makes one Locker per bucket and prefix and shares it.
//
// Trusted clock: each held record also stores an expiry, the writer's
// wall clock at sending plus the TTL, and a Locker takes a key over once
// that expiry plus Options.MaxClockSkew has passed on its own wall clock.
// A takeover can come at once, without an earlier look, but its safety
// rests on every machine's wall clock staying within MaxClockSkew of the
// others. A trusted-clock Locker reading a record without an expiry falls
// back to watching its ETag.
//
// In both modes a holder counts its lease from the time it sent the
// request, on its own clock (Lease.ValidUntil). The remembered ETag also
// serves as the condition of the Locker's next write to the object, which
// saves a read when it is still current (and costs one when it is not).
//
// # Requests
//
// Counted on the wire against MinIO (the test TestShared/Requests/PerCall),
// in GETs and conditional PUTs:
//
//   - Acquire of a key this Locker never saw: 1 GET and 1 PUT.
//   - Acquire of a key it last saw free, still free: 1 PUT.
//   - Renew, Release: 1 PUT each.
//   - A failed try (the key held): 1 GET; when the Locker remembered the
//     key free but another took it since, 1 PUT (refused) and 1 GET.
//   - Inspect: 1 GET. Break: 1 GET and 1 PUT (1 GET for a free key).
//   - Publish: 1 PUT.
//
// An acquire and release of one key by one Locker is thus 2 requests once
// it knows the key, 3 the first time. S3 charges more for a PUT than
// for a GET or HEAD.
//
// # Waiting
//
// S3 cannot tell a client that an object changed, so a Locker probes:
// while a fence.Session.Lock of this Locker waits for a key, the Locker
// sends a HEAD request for the key's object every Options.ProbeInterval
// (default 100 ms) with If-None-Match on the ETag it last saw (S3 answers
// 304 Not Modified while it is unchanged), reads the record when it
// changed, and wakes the waiter when the record shows the lease released,
// broken or taken over by another owner, or another published value,
// whichever client did it. Waiters
// of one key in one Locker share one probe, which stops when the last of
// them stops waiting; a wait starts with one read of the record. The
// waiter also wakes when the lease runs out for this Locker: in
// clock-free mode a full lease after the Locker first saw the ETag (a
// probe counts), in trusted-clock mode at the stored expiry plus
// MaxClockSkew; then its attempt takes the key over. The cost: one HEAD
// per waited-for key per probe interval per Locker, 10 a second at the
// default, and nothing while nobody waits. Set ProbeInterval
// (probe-interval in a URL) longer to read less, or negative (off) to
// poll at fence.SessionOptions.PollInterval instead.
//
// # Ambiguous outcomes
//
// Every write carries a fresh random id. When a write fails without a
// definite answer (a lost response, a timeout of the connection, a 5xx
// such as 503 SlowDown), the Locker reads the object back: if it holds
// the bytes just written, the write was applied and the method goes on as
// if it had been answered; if the ETag is still the one the condition
// named (or the object is still missing, for a create), the write is
// retried after a backoff; otherwise it lost to another writer. 429 is
// retried without a read. The client's own retries are off for these
// requests (the client is otherwise used as it is), so that each attempt
// is reconciled; Options.MaxAttempts bounds the tries. When ctx ends
// first, nothing is read back and the error wraps ctx.Err(): the write
// may still have been applied, as the fence.Locker contract says.
//
// # Public values
//
// Locker.Publish (Handle.Publish) keeps a value of up to fence.MaxValueLen
// bytes with a lease, for an election's followers, in the field "value"
// of the record (any bytes, in base64): the record is rewritten with it
// under the same precondition as a renewal, on the ETag this Locker
// last saw, with a new write id; a Publish of "" removes the field.
// Renewals keep the value; Acquire, Release and Break write records
// without it, so a later lease starts with none, and Inspect reports it
// only while the lease is held. The lease's duration and, in
// trusted-clock mode, its stored expiry stay as the last renewal wrote
// them: the holder's own lease is not extended. Every write makes a new
// ETag, which a clock-free contender cannot tell from a renewal: it
// starts its full-lease watch again from the Publish, as it would for a
// renewal sent at that moment and never for longer. A holder that died
// right after a Publish is taken over a full lease after it, as after a
// renewal; a lease that ran out on its holder's clock publishes nothing. The probes of waiting Lockers (see Waiting)
// see the new ETag, read the record and wake their waiters when the
// value changed, so followers see it within a probe interval.
// A Publish costs one conditional PUT (see Requests).
//
// A record without a value is written byte for byte as by earlier
// releases, which read it as before. Earlier releases refuse a record
// that carries a value (an unknown field: fence.ErrCorrupt) until its
// lease ends; upgrade every process that uses a bucket before any of
// them publishes.
//
// # Several keys at once
//
// S3 has no operation that writes several objects at once, so
// fence.Session.LockAll takes the keys one at a time in a global order and
// releases what it took when one is busy: the set is all or nothing for
// the caller, but not one atomic step in the store (another process may
// see part of it held for a moment). Measured against the same number of
// Session.Lock calls one after another (BenchmarkLockAll in lockers/s3):
// the same requests, and about the same time.
//
// # The stored object
//
// One object per key, named Options.Prefix + key (at most
// MaxObjectKeyLen bytes in all), never deleted, written with
// Content-Type application/json and Cache-Control no-store. Its ETag is
// the record's version: every write is conditional on it, and clock-free
// Lockers time takeovers by it. Its content is one JSON object of at most
// 16 KiB with exactly these fields:
//
//   - "v" (number): the format version, 1.
//   - "state" (string): "held" from Acquire until Release or Break write
//     "free".
//   - "owner" (string): the owner id of the current or last lease.
//   - "token" (string): the last token issued, in decimal (a string, so
//     that no JSON reader rounds it), 1 to 2^64-1. Only Acquire raises it.
//   - "ttl_ns" (number): the lease duration in nanoseconds.
//   - "expires_unix_ns" (number): in held records written with
//     Options.TrustedClock only, the writer's wall clock when it sent the
//     write plus the lease, in Unix nanoseconds.
//   - "write" (string): a random id, new on every write, by which a writer
//     finds its own lost write.
//   - "value" (string): in held records only, and only after a Publish,
//     the published value in standard base64, at most fence.MaxValueLen
//     bytes once decoded.
//
// For example:
//
//	{"v":1,"state":"held","owner":"6f1e2a9c-3b7d-4c58-9e21-5a0f8d7b4c36","token":"7","ttl_ns":30000000000,"write":"LJ4R7YQ2MZK5XW3TNH6PBD2VCE"}
//
// To look: aws s3 cp s3://BUCKET/KEY -, and aws s3api head-object for the
// ETag. To free a key, call Break. A record with a field missing, unknown
// or out of range is reported corrupt (fence.ErrCorrupt) and nothing
// writes over it, not even Break: repair it by uploading a free record
// (state "free", no expires_unix_ns) whose token is no lower than the last
// one issued.
//
// # Permissions
//
// The Locker needs s3:GetObject and s3:PutObject on the records' keys
// (arn:aws:s3:::BUCKET/PREFIX*), and s3:ListBucket on the bucket: without
// it S3 answers 403 AccessDenied, not 404, to a read of a missing key,
// and every Acquire of a new key fails. Create needs s3:CreateBucket.
// The Locker never deletes, so it needs no s3:DeleteObject. A bucket
// policy may require conditional writes (s3:if-none-match and
// s3:if-match condition keys): every write of the Locker carries one.
// Untested here: these are AWS's documented rules, which MinIO does not
// enforce the same way.
//
// # Opening from a URL
//
// Importing this package registers the URL scheme s3 with
// fence.OpenLocker:
//
//	s3://BUCKET[?region=R&endpoint=URL&path-style=true&prefix=P&max-key-segment=N&backoff=D&trusted-clock=true&max-clock-skew=D&probe-interval=D|off]
//
// region, endpoint and path-style configure the client as for
// resources/s3's URLs (endpoint is the base URL of an S3-compatible
// server, path-style addresses the bucket in the path rather than the
// host name); prefix is Options.Prefix (it may be empty); max-key-segment
// is Options.MaxKeySegmentLen (255 on MinIO); backoff is Options.Backoff
// (at most 8s); trusted-clock and max-clock-skew are Options.TrustedClock
// and Options.MaxClockSkew; probe-interval is Options.ProbeInterval, a
// duration such as 250ms, or off. Unknown parameters are refused with
// fence.ErrInvalid.
//
// The client is made from the SDK's default configuration (credentials
// and region from the usual environment), with no logging and no
// client-side retry quota. fence.OpenOptions.HTTPClient, when set,
// carries its requests as it is; fence.OpenOptions.Clock is
// Options.Clock.
//
// # Emulators
//
// The package is tested on MinIO. TestEmulatorHonoursTheWriteConditions
// checks every answer the Locker relies on against it: MinIO answers
// If-Match on a missing key with 404 NoSuchKey as S3 does (older MinIO
// releases applied such a write: minio/minio#21526), answers HEAD with
// If-None-Match 304, and tells NoSuchKey from NoSuchBucket. It differs
// from S3 in what follows, which the tests account for:
//
//   - Concurrent conditional writes on one ETag: MinIO answers 412 to
//     every loser and never 409 ConditionalRequestConflict; the 409 path
//     is tested with injected answers.
//   - MinIO keeps objects in a file system: it refuses keys with a
//     segment between slashes longer than 255 bytes (set
//     MaxKeySegmentLen), and keys with empty, "." or ".." segments, which
//     S3 accepts.
//   - MinIO answered no request with 503 SlowDown in these tests: S3's
//     throttling is injected.
package s3
