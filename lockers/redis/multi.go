package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.MultiAcquirer = (*store)(nil)

// AcquireAll implements driver.MultiAcquirer with one script that names
// every key's records in KEYS: all or nothing, atomically on the server
// (see acquireAllScript), each key's token from its own counter, as
// Acquire issues them. A busy key gets the *fence.HeldError Acquire would
// give; nothing is written then. With MinReplicas, a set too few replicas
// acknowledged is released again and reported as a *ReplicationError.
//
// A Redis Cluster runs a script on one node, over the keys of one hash
// slot: on a *goredis.ClusterClient, a set whose keys do not share a slot
// (see the package doc, "Records") gets an error matching
// errors.ErrUnsupported, and fence.Session.LockAll then takes the keys
// one at a time. So does a set on any client other than a
// *goredis.Client or *goredis.ClusterClient (a *goredis.Ring shards keys
// over servers that share no script).
func (d *store) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	rkeys := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		rkeys = append(rkeys, d.keys(k)...)
	}
	switch d.c.(type) {
	case *goredis.Client:
	case *goredis.ClusterClient:
		slot := keySlot(rkeys[0])
		for i, k := range keys {
			if s := keySlot(rkeys[2*i]); s != slot {
				return nil, fmt.Errorf("keys %q and %q are in hash slots %d and %d; a script takes the keys of one slot: %w", keys[0], k, slot, s, errors.ErrUnsupported)
			}
		}
	default:
		return nil, fmt.Errorf("one script over several keys needs a *redis.Client or *redis.ClusterClient, not a %T: %w", d.c, errors.ErrUnsupported)
	}
	sent := d.clock.Now()
	args := make([]any, 0, 1+len(owners))
	args = append(args, millis(ttl))
	for _, o := range owners {
		args = append(args, o)
	}
	r, acked, err := d.run(ctx, acquireAllScript, keys[0], rkeys, args...)
	if err != nil {
		return nil, err
	}
	switch r.Status {
	case "ok":
	case "held", "corruptat":
		i, ok := r.Vals[0].(int64)
		if !ok || i < 1 || int(i) > len(keys) {
			return nil, r.Unexpected(keys[0])
		}
		key := keys[i-1]
		if r.Status == "corruptat" {
			why, _ := r.Str(1)
			return nil, &fence.CorruptError{Key: key, Reason: why}
		}
		t, o, pttl, err := holderAt(r, key, 1)
		if err != nil {
			return nil, err
		}
		return nil, &fence.HeldError{Key: key, Owner: o, Token: t, ValidUntil: sent.Add(pttl)}
	default:
		return nil, r.Unexpected(keys[0])
	}
	leases := make([]fence.Lease, len(keys))
	for i, k := range keys {
		t, err := tokenAt(r, k, i)
		if err != nil {
			return nil, err
		}
		leases[i] = fence.Lease{Key: k, Owner: owners[i], Token: t, TTL: ttl}
	}
	if acked < d.minReplicas {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(d.waitTimeout, time.Second))
		var rerrs []error
		for _, l := range leases {
			if err := d.Release(rctx, l); err != nil {
				rerrs = append(rerrs, err)
			}
		}
		cancel()
		return nil, &ReplicationError{Op: "acquire", Wanted: d.minReplicas, Acked: acked, Timeout: d.waitTimeout, Token: leases[0].Token, ReleaseErr: errors.Join(rerrs...)}
	}
	return leases, nil
}

// keySlot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of its
// hash tag, the part between its first '{' and the next '}' when that is
// not empty, or of the whole key, modulo 16384.
func keySlot(key string) int {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}
