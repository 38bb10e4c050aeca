// Package redis fences values kept in Redis (through go-redis v9,
// github.com/redis/go-redis/v9): a write carrying token t is applied only
// if t is at least the highest token the value has seen, and the check
// and the write are one Lua script, which Redis runs atomically.
//
// Its name clashes with lockers/redis and with go-redis; import it under
// an alias:
//
//	import fenceredis "github.com/fencekit/fence/resources/redis"
//
// # The cache-rebuild case
//
// A cache entry rebuilt from a slow source (a report, an aggregate) is
// written by whichever worker holds the rebuild's lock. A worker that was
// paused past its lease (garbage collection, a slow query) and then
// writes would put an old result over a newer one; with its lease's token
// on the write, it is refused with a *fence.StaleTokenError instead:
//
//	lease, err := locker.Acquire(ctx, "rebuild/report", time.Minute, nil)
//	...
//	report := build(ctx) // slow
//	err = cache.Put(ctx, "report", lease.Token, report)
//	if errors.Is(err, fence.ErrStaleToken) {
//		// a newer rebuild has written: ours is dropped
//	}
//
// Readers read the hash's value field (HGET PREFIX+NAME value) or call
// Get. The resource's As gives the go-redis client it was made with, to
// a *goredis.UniversalClient target.
//
// # Records
//
// The value named N is the hash PREFIX + N (Options.Prefix, default
// DefaultPrefix, "fence:value:"), with the fields:
//
//   - token: the highest token accepted, as a decimal (1 to 2^64-1). A
//     write with a lower token is refused; an equal or higher one is
//     applied and sets it.
//   - value: the value, absent after a Delete (a tombstone: the hash
//     stays with its token, so that a stale writer cannot create the value
//     again with an older token).
//   - write: a random id of the write that set token, with which a write
//     whose answer was lost finds out whether it was applied.
//
// The hash has no expiry. Do not delete it, or let Redis evict it
// (maxmemory-policy allkeys-*): that forgets the token, and a stale
// writer's next write is accepted. A key that is not a hash, or a hash
// without a decimal token, is reported as a *fence.CorruptError and never
// written over.
//
// # Claims
//
// Claim (fence.Resource.Claim) runs the write script's claim: if the
// stored token is at most the claimed one, it sets the hash's token and
// write id and keeps its value, or its absence (a key without a hash gets
// a tombstone).
//
// # Lost answers
//
// A write is sent once: go-redis does not resend it on a lost connection
// (the command says so), so that a write is never applied twice unseen.
// When its answer is lost, the write reads the hash back: if the hash
// carries the write's id, the write succeeds; otherwise it returns a
// *fence.UnknownOutcomeError (matching fence.ErrUnknownOutcome), because
// the write may still land, or have landed and been replaced by a higher
// token. Retrying with the same token and value is harmless.
//
// # Failover
//
// As for lockers/redis: replication is asynchronous, so a write
// acknowledged by a primary that fails before a replica has it is lost,
// and with it the token it raised; a stale writer's write may then be
// accepted by the promoted replica. Where that matters, keep fenced
// values on a server whose acknowledged writes survive a crash
// (appendonly yes, appendfsync always) and that is not failed over to an
// asynchronous replica.
//
// # Opening from a URL
//
// Importing the package registers the resource URL schemes "redis" and
// "rediss" with fence.OpenResource:
//
//	redis[s]://[USER[:PASSWORD]@]HOST[:PORT][/DB][?prefix=P&...]
//
// prefix is Options.Prefix; every other parameter is go-redis's (see
// goredis.ParseURL). No error shows the password. The opened resource's
// Close closes the client it made.
package redis
