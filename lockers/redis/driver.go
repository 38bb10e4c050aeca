package redis

import (
	"context"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/redisscript"
)

// store is the driver.Locker on Redis: one script per call (two
// commands in one round trip with WAIT), on input the portable layer has
// validated. Its errors are bare causes; the *fence.Locker over it
// prefixes them.
type store struct {
	c           goredis.UniversalClient
	clock       fence.Clock // for the local times of HeldError and LockInfo
	prefix      string
	channel     string // release notifications
	minReplicas int
	waitTimeout time.Duration
	subs        *subscriber
}

var (
	_ driver.Locker = (*store)(nil)
	_ driver.Aser   = (*store)(nil)
)

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "redis", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL}
}

// As implements driver.Aser: it gives the client given to New (or made by
// the URL opener) to a *goredis.UniversalClient.
func (d *store) As(target any) bool {
	if p, ok := target.(*goredis.UniversalClient); ok {
		*p = d.c
		return true
	}
	return false
}

// lockKey and counterKey name key's two records: PREFIX{KEY}:lock and
// PREFIX{KEY}:token. The braces make KEY the hash tag of both (up to its
// first '}', if it has one: the two names still agree up to there), so a
// cluster keeps them in one slot, as a script that touches both needs.
// No lock key of one key is the counter key of another: they end
// differently.
func (d *store) lockKey(key string) string    { return d.prefix + "{" + key + "}:lock" }
func (d *store) counterKey(key string) string { return d.prefix + "{" + key + "}:token" }

func (d *store) keys(key string) []string { return []string{d.lockKey(key), d.counterKey(key)} }

// millis returns d in whole milliseconds, rounded up, so that the server's
// lease is never shorter than d.
func millis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// lockValue is what the lock key holds for lease: TOKEN:OWNER.
func lockValue(token fence.Token, owner string) string {
	return token.String() + ":" + owner
}

// Acquire implements driver.Locker: one script that takes the key if
// its lock key is absent (never taken, released, broken or expired),
// incrementing its counter, and otherwise writes nothing and reports the
// holder in a *fence.HeldError, whose ValidUntil is the holder's PTTL on
// the server added to the send time on the driver's clock. With
// MinReplicas, an acquisition that too few replicas acknowledged is
// released again and reported as a *ReplicationError.
func (d *store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	sent := d.clock.Now()
	keys := d.keys(key)
	r, acked, err := d.run(ctx, acquireScript, key, keys, owner, millis(ttl))
	if err != nil {
		return fence.Lease{}, err
	}
	switch r.Status {
	case "held":
		t, o, pttl, err := holderAt(r, key, 0)
		if err != nil {
			return fence.Lease{}, err
		}
		return fence.Lease{}, &fence.HeldError{Key: key, Owner: o, Token: t, ValidUntil: sent.Add(pttl)}
	case "ok":
	default:
		return fence.Lease{}, r.Unexpected(key)
	}
	token, err := tokenAt(r, key, 0)
	if err != nil {
		return fence.Lease{}, err
	}
	lease := fence.Lease{Key: key, Owner: owner, Token: token, TTL: ttl}
	if acked < d.minReplicas {
		// The primary has the lease but too few replicas do: a failover
		// could lose the token and issue it again. Hand nothing out, and
		// free the key (best effort, bounded: it expires otherwise).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(d.waitTimeout, time.Second))
		rerr := d.Release(rctx, lease)
		cancel()
		return fence.Lease{}, &ReplicationError{Op: "acquire", Wanted: d.minReplicas, Acked: acked, Timeout: d.waitTimeout, Token: token, ReleaseErr: rerr}
	}
	return lease, nil
}

// Renew implements driver.Locker: one script that extends the lock
// key's expiry by the lease's TTL if it still holds the lease's token and
// owner. With MinReplicas, a renewal too few replicas acknowledged is a
// *ReplicationError (the primary has it).
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	r, acked, err := d.run(ctx, renewScript, lease.Key, d.keys(lease.Key), lockValue(lease.Token, lease.Owner), millis(lease.TTL))
	if err != nil {
		return err
	}
	if err := done(r, lease.Key); err != nil {
		return err
	}
	if acked < d.minReplicas {
		return &ReplicationError{Op: "renew", Wanted: d.minReplicas, Acked: acked, Timeout: d.waitTimeout, Token: lease.Token}
	}
	return nil
}

// Release implements driver.Locker: one script that deletes the lock
// key if it still holds the lease's token and owner (compare-and-delete)
// and announces the release. The counter stays. It does not WAIT: a
// release lost in a failover only keeps the key until its expiry. The
// script is sent once: resent after a lost answer, a release that had
// run would find the key free and answer not held, so the lost answer's
// error is returned instead.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	v, err := releaseScript.RunOnce(ctx, d.c, d.keys(lease.Key), lockValue(lease.Token, lease.Owner), d.channel, lease.Key)
	if err != nil {
		return err
	}
	r, err := redisscript.ParseReply(lease.Key, v)
	if err != nil {
		return err
	}
	return done(r, lease.Key)
}

// Break implements driver.Locker: one script that deletes the lock
// key whoever holds it, sets the counter to one more than the larger of
// the counter and the broken holder's token, and announces the release.
// With MinReplicas, a Break too few replicas acknowledged is a
// *ReplicationError (the primary has it).
func (d *store) Break(ctx context.Context, key string) error {
	r, acked, err := d.run(ctx, breakScript, key, d.keys(key), d.channel, key)
	if err != nil {
		return err
	}
	if err := done(r, key); err != nil {
		return err
	}
	if acked < d.minReplicas {
		return &ReplicationError{Op: "break", Wanted: d.minReplicas, Acked: acked, Timeout: d.waitTimeout}
	}
	return nil
}

// Inspect implements driver.Locker: one script that reads both
// records. A held key shows its holder; a free one the last token issued
// and its owner, from the counter. ValidUntil is the PTTL added to the
// send time, as for HeldError.
//
// With MinReplicas, the script also writes the counter back unchanged
// and WAIT follows it, and a holder fewer replicas acknowledged is a
// *ReplicationError: the primary may show an acquisition whose answer
// was lost before its WAIT's, and a caller reconciling that lost answer
// by Inspect (as fence.Session does) must not take up a lease that a
// failover could hand out again.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	sent := d.clock.Now()
	s := inspectScript
	if d.minReplicas > 0 {
		s = inspectWrittenScript
	}
	r, acked, err := d.run(ctx, s, key, d.keys(key))
	if err != nil {
		return fence.LockInfo{}, err
	}
	if r.Status != "ok" {
		return fence.LockInfo{}, r.Unexpected(key)
	}
	info, err := lockInfo(r, key, sent)
	if err == nil && info.Held && acked < d.minReplicas {
		return fence.LockInfo{}, &ReplicationError{Op: "inspect", Wanted: d.minReplicas, Acked: acked, Timeout: d.waitTimeout, Token: info.Token}
	}
	return info, err
}

// script runs s once on the key's server: EVALSHA, and EVAL when the
// server does not have the script cached yet (go-redis's Script.Run).
func (d *store) script(ctx context.Context, s *goredis.Script, key string, keys []string, args ...any) (redisscript.Reply, error) {
	v, err := s.Run(ctx, d.c, keys, args...).Result()
	if err != nil {
		return redisscript.Reply{}, err
	}
	return redisscript.ParseReply(key, v)
}

// run runs s as script does, followed on the same connection by WAIT when
// MinReplicas is set, and returns how many replicas acknowledged (0
// without WAIT).
func (d *store) run(ctx context.Context, s *goredis.Script, key string, keys []string, args ...any) (redisscript.Reply, int, error) {
	if d.minReplicas == 0 {
		r, err := d.script(ctx, s, key, keys, args...)
		return r, 0, err
	}
	r, acked, err := d.waited(ctx, s, key, keys, args)
	return r, int(acked), err
}

// waitArgs are the arguments of WAIT.
func (d *store) waitArgs() []any {
	return []any{"wait", strconv.Itoa(d.minReplicas), strconv.FormatInt(millis(d.waitTimeout), 10)}
}
