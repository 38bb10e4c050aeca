// Package gcs keeps the leases of a *fence.Locker in Google Cloud
// Storage, driven through cloud.google.com/go/storage.
//
// New returns the *fence.Locker over this package's store, the
// driver.Locker that reads and conditionally writes one object per key. The portable layer does what every backend shares: it
// checks keys, TTLs, owners and leases, makes owner ids, checks ctx, times
// Lease.ValidUntil from its send time, refuses a Renew or Release of a
// lease that ran out on the local clock without asking the store, and
// wraps every error as "fence/gcs: <op> "<key>": <cause>". The store
// keeps only what is Cloud Storage's: the object-name rules beyond those
// checks, the generation preconditions, retries and the reconciliation of
// lost answers; its judgement of expiry is the one lockers/dynamo uses
// too. Make the Locker with New over a bucket of the caller's client, or
// from a URL with fence.OpenLocker (see "Opening from a URL"):
//
//	import _ "github.com/fencekit/fence/lockers/gcs"
//
//	locker, err := fence.OpenLocker(ctx, "gs://my-locks?prefix=locks/", nil)
//
// The Locker's As gives the bucket, to a **storage.BucketHandle: the one
// given to New, or the one the URL opener made.
//
// Each key is one object of a bucket, named Options.Prefix + key, holding
// a small JSON record: the owner of the last lease, the fencing token (a
// number that only grows), the lease duration, whether the key is held
// and a random id of the write that produced it. Every write is a
// single-request upload with a generation precondition: ifGenerationMatch
// on the generation the Locker last saw, or ifGenerationMatch=0 (the object
// must not exist) for a key seen for the first time. Acquire writes the
// next token under that precondition, so of two Lockers that saw the same
// generation exactly one succeeds and tokens never repeat. Objects are
// never deleted: Release and Break write a free record that keeps the
// token. Do not delete the objects by hand; that restarts a key's tokens
// at 1.
//
// Cloud Storage answers 404 to a missing bucket and to a missing object
// alike, so a Locker's first read of a missing object (and any write
// answered 404) also asks for the bucket: a key in a bucket that does not
// exist gets an error matching storage.ErrBucketNotExist and
// fence.ErrStoreMissing, never "free".
// A caller without permission to read the bucket's metadata is taken at
// the object's word.
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence).
//
// # Who measures expiry
//
// Cloud Storage has no clock a precondition can read, so a Locker decides
// when another owner's lease has expired, in one of two ways, chosen with
// Options.TrustedClock.
//
// Clock-free (the default): a Locker takes a key over only after it has
// itself seen the same object generation, unchanged, for the full lease
// duration stored in the record, measured on its own monotonic clock.
// Clock skew between machines does not matter, only clock rates do.
// Acquire still tries once and never waits: the Locker remembers what it
// saw (the generation of each object, its record, and since when it has
// been seen), so an Acquire or Inspect now starts the wait and a later
// Acquire takes the key over. A process that starts afresh, or a Locker
// that never looked at a key, waits a full lease from its first look,
// even if the holder died long ago. Every Renew writes a new generation,
// so observers restart their wait. What a Locker saw counts for all its
// Sessions, but not for another Locker: a process makes one Locker per
// bucket and prefix and shares it.
//
// Trusted clock: each held record also stores an expiry, the writer's
// wall clock at sending plus the TTL, and a Locker takes a key over once
// that expiry plus Options.MaxClockSkew has passed on its own wall clock.
// A takeover can come at once, without an earlier look, but its safety
// rests on every machine's wall clock staying within MaxClockSkew of the
// others. A trusted-clock Locker reading a record without an expiry falls
// back to watching its generation.
//
// In both modes a holder counts its lease from the time it sent the
// request, on its own clock (Lease.ValidUntil). Renew and Release accept
// any copy of a lease (the one from Acquire or from any Renew): the
// portable layer judges it by the latest ValidUntil this Locker gave it,
// and once that has passed they fail with a *fence.NotHeldError without
// writing. The remembered generation also serves as the precondition of
// the Locker's next write to the object, which saves a read when it is
// still current (and costs one when it is not).
//
// # Write rate
//
// Cloud Storage accepts about one write per second to one object name and
// answers 429 (or 503) to more. The Locker backs off with jitter and
// retries such answers (and transient failures) within the caller's ctx,
// up to Options.MaxAttempts tries. Renewing more often than MinRenewInterval
// (1 s) only earns throttling, so the Locker reports it as its minimum
// (driver.Info.MinRenewInterval) and fence.NewSession refuses a
// RenewInterval below it with an error matching fence.ErrInvalid. MinTTL
// is three times that, so a Session's default renewal every TTL/3 stays
// within the limit at any TTL the Locker accepts. Renewing one lease by
// hand (fence.Locker.Renew) is not limited: keep such calls a second
// apart. An Acquire and a Release of one key in the same second, or a
// hand-off right after an acquisition, may be throttled and delayed; that
// costs latency, not correctness.
//
// # Waiting
//
// Cloud Storage cannot tell a client that an object changed, so a Locker
// probes: while a fence.Session.Lock of this Locker waits for a key, the
// Locker reads the metadata of the key's object every
// Options.ProbeInterval (default 100 ms), on the condition that its
// generation changed (ifGenerationNotMatch: Cloud Storage answers 304
// Not Modified, without a body, when it did not), reads the record when
// it did, and wakes the waiter when the record shows the lease released,
// broken or taken over by another owner, or another published value,
// whichever client did it.
// Waiters of one key in one Locker share one probe, which stops when the
// last of them stops waiting; a wait starts with one read of the record,
// before the first attempt. The waiter also wakes when the lease runs out
// for this Locker: in clock-free mode a full lease after the Locker first
// saw the generation (a probe counts), in trusted-clock mode at the stored
// expiry plus MaxClockSkew; then its attempt takes the key over.
//
// Expect a hand-off (the holder's release returns, the waiter's Lock
// returns) of half a probe interval on average, at most a whole one,
// plus four round trips (the probe, its read of the record, and the
// waiter's read and write). Measured on fake-gcs-server with the
// defaults (BenchmarkHandOff, 200 hand-offs): p50 53 ms and p99 215 ms,
// against 698 ms and 1010 ms with probes off. On Cloud Storage, the
// write rate of one object name (see Write rate) may delay the waiter's
// write.
//
// fake-gcs-server ignores ifGenerationNotMatch on metadata reads and
// answers 200 with the unchanged generation, which the probe also takes
// as "unchanged"; the tests do not exercise the 304 answer.
//
// The cost: one metadata read (a Class B operation in Cloud Storage's
// price list) per waited-for key per probe interval per Locker, 10 a
// second at the default, whatever the number of waiters in that Locker,
// and one more read after each change; nothing while nobody waits.
// Several processes waiting for one key each probe it. Set
// ProbeInterval (probe-interval in a URL) longer to read less, or
// negative (off) to poll at fence.SessionOptions.PollInterval instead.
//
// # Ambiguous outcomes
//
// Every write carries a fresh random id. When a write fails without a
// definite answer (a lost response, a timeout of the connection, a 5xx),
// the Locker reads the object back: if it holds the bytes just written,
// the write was applied and the method goes on as if it had been answered;
// if the generation is still the one the precondition named, the write is
// retried; otherwise it lost to another writer. When ctx ends first,
// nothing is read back and the error wraps ctx.Err(): the write may still
// have been applied, as the fence.Locker contract says.
//
// # Public values
//
// Locker.Publish (Handle.Publish) keeps a value of up to fence.MaxValueLen
// bytes with a lease, for an election's followers, in the field "value"
// of the record (any bytes, in base64): the record is rewritten with it
// under the same precondition as a renewal, on the generation this Locker
// last saw, with a new write id; a Publish of "" removes the field.
// Renewals keep the value; Acquire, Release and Break write records
// without it, so a later lease starts with none, and Inspect reports it
// only while the lease is held. The lease's duration and, in
// trusted-clock mode, its stored expiry stay as the last renewal wrote
// them: the holder's own lease is not extended. Every write makes a new
// generation, which a clock-free contender cannot tell from a renewal: it
// starts its full-lease watch again from the Publish, as it would for a
// renewal sent at that moment and never for longer. A holder that died
// right after a Publish is taken over a full lease after it, as after a
// renewal; a lease that ran out on its holder's clock publishes nothing. The probes of waiting Lockers (see Waiting)
// see the new generation, read the record and wake their waiters when the
// value changed, so followers see it within a probe interval.
// A Publish is a write of the object like a renewal, and Cloud Storage's
// write rate counts it (see Write rate): publish at most about once a
// second, and not in the same second as a renewal, or it is throttled and
// retried.
//
// A record without a value is written byte for byte as by earlier
// releases, which read it as before. Earlier releases refuse a record
// that carries a value (an unknown field: fence.ErrCorrupt) until its
// lease ends; upgrade every process that uses a bucket before any of
// them publishes.
//
// # Several keys at once
//
// Cloud Storage has no operation that writes several objects at once, so
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
// MaxObjectNameLen bytes in all), never deleted, written
// with Content-Type application/json and Cache-Control no-store. Its
// generation is the record's version: every write is conditional on it,
// and clock-free Lockers time takeovers by it. Its content is one JSON
// object of at most 16 KiB with exactly these fields:
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
// To look: gcloud storage cat gs://BUCKET/NAME, and gcloud storage objects
// describe gs://BUCKET/NAME for the generation. To free a key, call Break.
// A record with a field missing, unknown or out of range is reported
// corrupt and nothing writes over it, not even Break: repair it by
// uploading a free record (state "free", no expires_unix_ns) whose token
// is no lower than the last one issued.
//
// # Opening from a URL
//
// Importing this package registers the URL scheme gs with
// fence.OpenLocker:
//
//	gs://BUCKET[?prefix=P&project=ID&endpoint=URL&backoff=D&trusted-clock=true&max-clock-skew=D&probe-interval=D|off]
//
// prefix is Options.Prefix (it may be empty); project is the Google Cloud
// project in which the Locker's Create makes the bucket (default:
// $GOOGLE_CLOUD_PROJECT; none is needed on an emulator); endpoint is the
// base URL of the server (the JSON API under /storage/v1/), for emulators
// and private endpoints; backoff is Options.Backoff, the first wait before
// a retry (a duration such as 20ms, at most 8s; default DefaultBackoff);
// trusted-clock and max-clock-skew are Options.TrustedClock and
// Options.MaxClockSkew; probe-interval is Options.ProbeInterval, a
// duration such as 250ms, or off.
//
// The client is storage.NewClient's, with credentials from Application
// Default Credentials, or none when STORAGE_EMULATOR_HOST names an
// emulator. fence.OpenOptions.HTTPClient, when set, carries the requests
// as it is: the SDK adds no credentials to it. fence.OpenOptions.Clock is
// Options.Clock. The opened Locker's Create makes the bucket
// (CreateBucket), and its Close closes the client.
//
// # Emulators
//
// The package is tested on fake-gcs-server; CONTRIBUTING.md lists where
// it differs from Cloud Storage.
package gcs
