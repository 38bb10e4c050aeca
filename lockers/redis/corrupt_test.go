package redis

import (
	"errors"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
)

// corruptRecords are records the scripts never write, each set up by hand
// on a key's lock key and counter.
var corruptRecords = []struct {
	name string
	set  func(t *testing.T, c *goredis.Client, lock, counter string)
}{
	{"lock key a list", func(t *testing.T, c *goredis.Client, lock, _ string) {
		must(t, c.RPush(t.Context(), lock, "x").Err())
	}},
	{"lock key garbage", func(t *testing.T, c *goredis.Client, lock, _ string) {
		must(t, c.Set(t.Context(), lock, "not a lease", time.Minute).Err())
	}},
	{"lock key token not decimal", func(t *testing.T, c *goredis.Client, lock, _ string) {
		must(t, c.Set(t.Context(), lock, "12x:owner", time.Minute).Err())
	}},
	{"lock key token zero", func(t *testing.T, c *goredis.Client, lock, _ string) {
		must(t, c.Set(t.Context(), lock, "0:owner", time.Minute).Err())
	}},
	{"lock key token over 2^63-1", func(t *testing.T, c *goredis.Client, lock, _ string) {
		must(t, c.Set(t.Context(), lock, "9223372036854775808:owner", time.Minute).Err())
	}},
	{"lock key without owner", func(t *testing.T, c *goredis.Client, lock, _ string) {
		must(t, c.Set(t.Context(), lock, "5:", time.Minute).Err())
	}},
	{"lock key without expiry", func(t *testing.T, c *goredis.Client, lock, _ string) {
		must(t, c.Set(t.Context(), lock, "5:owner", 0).Err())
	}},
	{"counter a string", func(t *testing.T, c *goredis.Client, _, counter string) {
		must(t, c.Set(t.Context(), counter, "7", 0).Err())
	}},
	{"counter without n", func(t *testing.T, c *goredis.Client, _, counter string) {
		must(t, c.HSet(t.Context(), counter, "token", "7", "owner", "o").Err())
	}},
	{"counter n not decimal", func(t *testing.T, c *goredis.Client, _, counter string) {
		must(t, c.HSet(t.Context(), counter, "n", "-3").Err())
	}},
	{"counter token above n", func(t *testing.T, c *goredis.Client, _, counter string) {
		must(t, c.HSet(t.Context(), counter, "n", "7", "token", "8", "owner", "o").Err())
	}},
	{"counter token without owner", func(t *testing.T, c *goredis.Client, _, counter string) {
		must(t, c.HSet(t.Context(), counter, "n", "7", "token", "7").Err())
	}},
	{"counter at its limit", func(t *testing.T, c *goredis.Client, _, counter string) {
		must(t, c.HSet(t.Context(), counter, "n", "9223372036854775807").Err())
	}},
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// dump returns what the two records of key hold, to compare before and
// after a call.
func dump(t *testing.T, c *goredis.Client, keys ...string) []string {
	t.Helper()
	var out []string
	for _, k := range keys {
		d, err := c.Dump(t.Context(), k).Result()
		if errors.Is(err, goredis.Nil) {
			d = "(none)"
		} else if err != nil {
			t.Fatal(err)
		}
		ttl, err := c.PTTL(t.Context(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl > 0 {
			ttl = time.Minute // only whether it has one
		}
		out = append(out, d, ttl.String())
	}
	return out
}

// TestCorruptRecords: every operation on a key whose records the scripts
// did not write gets a *fence.CorruptError and writes nothing. Acquire and
// Inspect read both records; Renew and Release read the lock key; Break
// reads both. (An operation that does not read a record cannot see it
// corrupt: Renew of a key whose counter is garbage renews, as the lock key
// is well-formed.)
func TestCorruptRecords(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	l, d := newStoreLocker(t, c, nil)
	lease := fence.Lease{Owner: "owner", Token: 5, TTL: time.Minute}
	for _, rec := range corruptRecords {
		t.Run(rec.name, func(t *testing.T) {
			t.Parallel()
			key := rec.name
			lock, counter := d.lockKey(key), d.counterKey(key)
			rec.set(t, c, lock, counter)
			before := dump(t, c, lock, counter)
			lockCorrupt := rec.name[:4] == "lock"
			check := func(op string, err error, want bool) {
				t.Helper()
				if !want {
					return
				}
				if _, ok := errors.AsType[*fence.CorruptError](err); !ok || !errors.Is(err, fence.ErrCorrupt) {
					t.Errorf("%s: %v; want a *fence.CorruptError", op, err)
				}
				if after := dump(t, c, lock, counter); !slices.Equal(before, after) {
					t.Fatalf("%s wrote over the corrupt record", op)
				}
			}
			_, err := l.Acquire(t.Context(), key, time.Minute, nil)
			check("Acquire", err, true)
			_, err = l.Inspect(t.Context(), key)
			check("Inspect", err, rec.name != "counter at its limit") // readable, not incrementable
			check("Break", l.Break(t.Context(), key), true)
			lease := lease
			lease.Key = key
			// The portable layer refuses a lease it did not give out
			// without asking the store, so Renew and Release go to the
			// driver.
			check("Renew", d.Renew(t.Context(), lease), lockCorrupt)
			check("Release", d.Release(t.Context(), lease), lockCorrupt)
		})
	}
}
