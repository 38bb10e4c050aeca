// Package dynamo keeps the leases of a *fence.Locker in Amazon DynamoDB,
// driven through the AWS SDK for Go v2. New returns the Locker over a
// client of the caller's; fence.OpenLocker opens one from a URL (below).
//
// Each key is one item of a lease table whose partition key is a string
// attribute (see CreateTable). The item holds the owner of
// the last lease, the fencing token (a number that only grows), a record
// version that changes on every write, the lease duration and whether the
// key is held. Items are never deleted: Release and Break mark the item
// free and keep the token, so the next token continues the sequence. Do not
// delete items by hand; that restarts a key's tokens at 1.
//
// Every write is one conditional UpdateItem. Acquire sets the owner and a
// new version and increments the token with ADD in the same update, on the
// condition that the item is absent, free, or expired (below); a failed
// Acquire writes nothing and reads the item once to report the holder.
// Renew and Release are conditional on the owner and token of the lease
// (the pair names one acquisition: every Acquire increments the token), and
// write a new version too. Only Session.LockAll uses a transaction (see
// "Several keys at once"). Each method is one request; a failed Acquire is
// two on stores that do not return the item with a failed condition
// (ReturnValuesOnConditionCheckFailure).
//
// An item someone edited by hand so that it breaks these rules (a token
// that is not a whole number from 1 to 2^64-1, a missing or mistyped
// attribute) gets an error matching fence.ErrCorrupt from every method that
// reads it. Acquire's condition requires a numeric token from 1 to one
// below the largest, so it never increments a broken one; the one
// exception is a fractional token, which no condition can detect: Acquire
// then increments it and reports the item corrupt. Break does not read the
// item and frees it whatever it holds.
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence).
//
// # Layers
//
// The Locker is the *fence.Locker over this package's store (a
// driver.Locker). The portable layer does what
// every backend shares: it checks keys, TTLs, owner ids and leases,
// generates owner ids, sets Lease.ValidUntil on its Clock and refuses
// Renew and Release of a lease that has run out there, and wraps every
// error as "fence/dynamo: <op> "<key>": <cause>". The store does only
// what is DynamoDB's: the conditional writes below, the read-back of
// writes whose outcome is unknown, and the parsing of items; its
// judgement of expiry is the one lockers/gcs uses too. A table that does
// not exist gets an error matching fence.ErrStoreMissing (and the SDK's
// *types.ResourceNotFoundException); the Locker's Create or CreateTable
// creates it.
//
// The Locker's As gives the client given to New, or the one the URL
// opener made: to a *DynamoDBAPI, and to a **dynamodb.Client when it is
// one.
//
// # Who measures expiry
//
// DynamoDB has no clock that a condition can read, so a Locker decides
// when another owner's lease has expired. There are two ways, chosen with
// Options.TrustedClock.
//
// Clock-free (the default, as in Amazon's DynamoDB lock client): a Locker
// may take a key over only after it has itself seen the same record
// version, unchanged, for a full lease duration measured on its own
// monotonic clock. Clock skew between machines does not matter, only clock
// rates do. Acquire still tries once and never waits: the Locker remembers
// what it saw, so an Acquire (or Inspect) now starts the wait and a later
// Acquire can take the key over. A process
// that starts afresh, or a Locker that never looked at a key, waits a full
// lease from its first look, even if the holder died long ago. Every Renew
// writes a new version, so observers restart their wait; a holder that
// keeps renewing keeps the key. What a Locker saw counts for all its
// Sessions, but not for another Locker: a process makes one Locker per
// table and shares it.
//
// Trusted clock: each write also stores an expiry, the writer's wall clock
// plus the TTL, and a Locker takes a key over once that expiry plus
// Options.MaxClockSkew has passed on its own wall clock (in whole
// milliseconds, rounded towards the later takeover: the condition of the
// write compares the stored number, and a Locker's own judgement, in
// Inspect and HeldError.ValidUntil, agrees with it). A takeover can
// come right away, without a previous look, but its safety rests on every
// machine's wall clock staying within MaxClockSkew of the others.
//
// The trade-off: clock-free takeovers are late (a full lease after the
// first look, so up to two leases after the holder's last write, and
// again after a restart of the contender) but need no agreement between
// clocks; trusted-clock takeovers come on time, but a clock off by more
// than MaxClockSkew lets two owners hold the key at once. In either case
// the tokens still increase, and a fenced resource refuses the older
// holder's writes.
//
// In both modes a holder counts its lease from the time it sent the
// request, on its own clock (Lease.ValidUntil). Renew and Release accept
// any copy of a lease (the one from Acquire or from any Renew): they judge
// it by the latest ValidUntil this Locker gave it, and once that has passed
// they fail with fence.ErrNotHeld without writing. Do not mix the modes on
// one table.
//
// # Waiting
//
// DynamoDB cannot tell a client that an item changed, so a Locker probes:
// while a fence.Session.Lock of this Locker waits for a key, the Locker
// reads the key's item every Options.ProbeInterval (default 100 ms) with
// a strongly consistent GetItem of the lease attributes, and wakes the
// waiter when the item shows the lease released, broken or taken over by
// another owner, whichever client did it. Waiters of one key in one
// Locker share one probe, which stops when the last of them stops
// waiting; a wait starts with one such read, before the first attempt.
// The waiter also wakes when the lease runs out for this Locker: in
// clock-free mode a full lease after the Locker first saw the item's
// version (a probe counts), in trusted-clock mode at the stored expiry
// plus MaxClockSkew; then its attempt takes the key over.
//
// Expect a hand-off (the holder's release returns, the waiter's Lock
// returns) of half a probe interval on average, at most a whole one,
// plus two round trips (the probe and the waiter's UpdateItem). Measured
// on dynalite with the defaults (BenchmarkHandOff, 200 hand-offs): p50
// 56 ms and p99 125 ms, against 678 ms and 942 ms with probes off.
//
// The cost: one read capacity unit (a strongly consistent read of an item
// under 4 KB) per waited-for key per probe interval per Locker, 10 a
// second at the default, whatever the number of waiters in that Locker;
// nothing while nobody waits. Several processes waiting for one key each
// probe it. Set ProbeInterval (probe-interval in a URL) longer to read
// less, or negative (off) to poll at fence.SessionOptions.PollInterval
// instead.
//
// # Public values
//
// Locker.Publish (Handle.Publish) keeps a value of up to fence.MaxValueLen
// bytes with a lease, for an election's followers: one UpdateItem,
// conditional on the lease's owner and token and on held, sets the
// attributes value (B, the bytes as given) and value_token (N, the
// lease's token); a Publish of "" removes both. Inspect reports the value
// only while the lease is held and only when value_token is the item's
// token, so a later lease starts with none although Acquire, Renew,
// Release and Break never touch the value: they cost what they cost
// without it. A value adds its bytes to the item, and a write costs one
// write capacity unit per KB of the larger of the item before and after
// it: with a long key and a long value, renewals may cost two.
//
// A Publish writes no new version, so it is no renewal: a clock-free
// contender that watches the item keeps counting from the last renewal,
// and a holder that died right after publishing is taken over exactly as
// soon as it would have been without the Publish (TestPublishIsNoRenewal);
// in trusted-clock mode the stored expiry stays too. The probes of
// waiting Lockers (see "Waiting") read the value and wake their waiters
// when it changes, so followers see a new value within a probe interval.
// DynamoDB has no schema of attributes: tables made by earlier releases
// need nothing new, and Create adds nothing.
//
// # Several keys at once
//
// fence.Session.LockAll of up to MaxLockAllKeys (100) keys is one atomic
// operation when the client is a TransactAPI, as a *dynamodb.Client is:
// one consistent BatchGetItem reads every item and decides as Acquire
// does (a key held, or not yet expired for this Locker, is a
// *fence.HeldError and nothing is written), then one TransactWriteItems
// writes every lease, each update conditional on the version it read (or
// on the item's absence) and setting the next token. Two requests for
// any number of keys, against one per key taken one at a time; each
// item of a transaction costs two write capacity units instead of one. A
// key that changed in between cancels the whole transaction; the
// cancellation names it, and the Session waits for it or reports it as
// busy. The SDK repeats a transaction whose answer was lost with the same
// ClientRequestToken, which DynamoDB applies only once. More keys, a
// client that is no TransactAPI, or an endpoint without transactions
// (dynalite) make the Session take the keys one at a time in order,
// releasing what it took when one is busy. dynalite has no
// TransactWriteItems: the tests of the transaction
// (TestLockAllInOneTransaction, TestLockAllTransactionRaced and the
// conformance suite's LockAll cases) pass on DynamoDB Local 1.25.1, AWS's
// emulator, and skip on dynalite; DynamoDB itself is untested.
//
// # Ambiguous outcomes
//
// Every write carries a fresh random version. When a write fails in a way
// that leaves its outcome unknown (the SDK retried after a lost response
// and the retry's condition failed, or the request failed in transit), the
// Locker reads the item back with a consistent read: if the item carries
// its version, the write was applied and the method succeeds. Otherwise the
// error is returned; it may still be ambiguous (a request can be applied
// after the read), as the fence.Locker contract says. When ctx ends first,
// or the table does not exist, nothing is read back. When an Acquire's
// answer was lost, the lease it returns is valid from the send time of the
// write that won.
//
// # The stored item
//
// One item per key, never deleted, with these attributes:
//
//   - key (S): the partition key (named by Options.KeyAttribute), the lock
//     key as given.
//   - owner (S): the owner id of the current or last lease.
//   - token (N): the last token issued, a whole number from 1 to 2^64-1.
//     Acquire adds 1 to it with ADD (a new item starts at 1); nothing else
//     changes it.
//   - version (S): a random string, new on every write (Acquire, Renew,
//     Release, Break). Clock-free Lockers time takeovers by it, and a
//     writer finds its own lost write by it.
//   - lease_ms (N): the lease duration in milliseconds, rounded up.
//   - expires_ms (N): the writer's wall clock when it sent the last
//     Acquire or Renew, plus the lease, in Unix milliseconds, rounded up.
//     Written in both modes, read only with Options.TrustedClock. It is
//     not a DynamoDB Time to Live attribute.
//   - held (BOOL): true from Acquire until Release or Break sets it false
//     (with a new version), leaving the other attributes as they were.
//   - value (B) and value_token (N): the value last published and the
//     token of the lease it was published with (see "Public values");
//     absent until a Publish. A value whose value_token is not the
//     item's token belongs to an earlier lease and is ignored.
//
// A table made with other tools needs exactly one key, a HASH key of type
// S named by Options.KeyAttribute, and no sort key; any billing mode
// works. Do not enable DynamoDB's Time to Live on it: items must never be
// deleted (that restarts a key's tokens at 1).
//
// Attributes of your own on the item are left alone. To look, read the
// item with a consistent read, for example
//
//	aws dynamodb get-item --consistent-read --table-name TABLE --key '{"key":{"S":"KEY"}}'
//
// To free a key, call Break, or do what it does: set held to false and
// version to a new random string. Never lower a token or delete the item.
// To repair an item reported corrupt, give every attribute above its type
// and a token no lower than the last one issued.
//
// # Opening from a URL
//
// Importing this package registers the URL scheme dynamodb with
// fence.OpenLocker:
//
//	dynamodb://TABLE[?region=R&endpoint=URL&key-attribute=A&trusted-clock=true&max-clock-skew=D&probe-interval=D|off]
//
// The client is built by config.LoadDefaultConfig, so the region and
// credentials come from the AWS SDK's usual environment (AWS_REGION,
// AWS_PROFILE, AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL_DYNAMODB, ...);
// region= overrides the region and endpoint= the service endpoint (an
// emulator, a private endpoint). key-attribute= is Options.KeyAttribute,
// trusted-clock=true and max-clock-skew= select trusted-clock expiry
// (Options.TrustedClock, MaxClockSkew); probe-interval= is
// Options.ProbeInterval, a duration such as 250ms or off. fence.OpenOptions' HTTPClient
// carries the SDK's requests and its Clock is Options.Clock. The opened
// locker's Create creates the table (CreateTable).
//
// # Emulators
//
// The package is tested on dynalite; CONTRIBUTING.md lists where it
// differs from DynamoDB. dynalite 4.0.0 answers TransactWriteItems with
// UnknownOperationException: there, LockAll takes the keys one at a time
// (the Locker asks once and remembers), after one BatchGetItem that still
// refuses a set with a busy key without writing anything.
package dynamo
