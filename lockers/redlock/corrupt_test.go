package redlock

import (
	"context"
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
)

// TestCorruptRecords writes, by hand, values the locker never writes into
// the lock or counter key of one key on one master of three. Acquire,
// Inspect, Break, Renew and Release report them with a *fence.CorruptError
// for the key (never ErrInvalid: the store is at fault, not the caller),
// and nothing is written over them; a failed Acquire leaves no lock on
// the healthy masters.
func TestCorruptRecords(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, volatile)
	l, d := newStoreLocker(t, ms, nil)
	type setup func(ctx context.Context, c *goredis.Client, lock, ctr string) error
	set := func(key, v string, ttl time.Duration) setup {
		return func(ctx context.Context, c *goredis.Client, lock, ctr string) error {
			k := map[string]string{"lock": lock, "ctr": ctr}[key]
			return c.Set(ctx, k, v, ttl).Err()
		}
	}
	both := func(a, b setup) setup {
		return func(ctx context.Context, c *goredis.Client, lock, ctr string) error {
			if err := a(ctx, c, lock, ctr); err != nil {
				return err
			}
			return b(ctx, c, lock, ctr)
		}
	}
	tests := []struct {
		name string
		set  setup
	}{
		{"counter not a record", set("ctr", "garbage", 0)},
		{"counter without owner", set("ctr", "5", 0)},
		{"counter with empty owner", set("ctr", "5 ", 0)},
		{"counter token zero", set("ctr", "0 someone", 0)},
		{"counter leading zero", set("ctr", "07 someone", 0)},
		{"counter negative", set("ctr", "-3 someone", 0)},
		{"counter above maxToken", set("ctr", "9223372036854775808 someone", 0)},
		{"counter of 20 digits", set("ctr", "18446744073709551615 someone", 0)},
		{"counter a hash", func(ctx context.Context, c *goredis.Client, _, ctr string) error {
			return c.HSet(ctx, ctr, "token", "5").Err()
		}},
		{"lock not a record", both(set("ctr", "9 someone", 0), set("lock", "garbage", time.Minute))},
		{"lock above the counter", both(set("ctr", "3 someone", 0), set("lock", "5 someone", time.Minute))},
		{"lock without counter", set("lock", "5 someone", time.Minute)},
		{"lock without expiry", both(set("ctr", "5 someone", 0), set("lock", "5 someone", 0))},
		{"lock a list", func(ctx context.Context, c *goredis.Client, lock, ctr string) error {
			if err := c.Set(ctx, ctr, "5 someone", 0).Err(); err != nil {
				return err
			}
			return c.RPush(ctx, lock, "5 someone").Err()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			key := tt.name
			keys := d.keys(key)
			bad := ms[1].client
			if err := tt.set(ctx, bad, keys[0], keys[1]); err != nil {
				t.Fatal(err)
			}
			dump := func() [2]string {
				var d [2]string
				for i, k := range keys {
					d[i], _ = bad.Dump(ctx, k).Result()
				}
				return d
			}
			before := dump()
			wantCorrupt := func(op string, err error) {
				t.Helper()
				ce, ok := errors.AsType[*fence.CorruptError](err)
				switch {
				case !ok || ce.Key != key:
					t.Errorf("%s: %v, want a *fence.CorruptError for %q", op, err, key)
				case errors.Is(err, fence.ErrInvalid):
					t.Errorf("%s: %v matches ErrInvalid", op, err)
				default:
					t.Logf("%s: %v", op, err)
				}
			}
			_, err := l.Acquire(ctx, key, time.Minute, nil)
			wantCorrupt("Acquire", err)
			for i, m := range ms {
				if i == 1 {
					continue
				}
				if n := m.client.Exists(ctx, keys[0]).Val(); n != 0 {
					t.Errorf("%s: the failed Acquire left a lock", m.proc)
				}
			}
			_, err = l.Inspect(ctx, key)
			wantCorrupt("Inspect", err)
			wantCorrupt("Break", l.Break(ctx, key))
			lease := fence.Lease{Key: key, Owner: "someone", Token: 5, TTL: time.Minute}
			wantCorrupt("Renew", d.Renew(ctx, lease))
			wantCorrupt("Release", d.Release(ctx, lease))
			if after := dump(); after != before {
				t.Errorf("the corrupt records were written over")
			}
		})
	}
}
