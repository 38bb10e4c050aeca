package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/netfault"
	"github.com/fencekit/fence/internal/testing/valuetest"
)

// TestCorruptValueFields: value fields of the counter hash that the
// scripts did not write are reported by Inspect of the held key with a
// *fence.CorruptError; the lease goes on, and Publish writes over them.
func TestCorruptValueFields(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for _, tt := range []struct {
		name   string
		fields []any
	}{
		{"vtoken not a decimal", []any{"vtoken", "x1", "value", "v"}},
		{"vtoken with a leading zero", []any{"vtoken", "01", "value", "v"}},
		{"vtoken without a value", []any{"vtoken", "1"}},
		{"value without a vtoken", []any{"value", "v"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			l, d := newStoreLocker(t, c, nil)
			lease, err := l.Acquire(ctx, "k", time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.HSet(ctx, d.counterKey("k"), tt.fields...).Err(); err != nil {
				t.Fatal(err)
			}
			valuetest.CorruptValue(t, l, lease)
		})
	}
}

// TestAcquireAllOneScript: AcquireAll of 2, 8 and 64 keys sends one
// command (EVALSHA of its script), taken or refused, and a refused one
// changes no counter.
func TestAcquireAllOneScript(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := newClient(t)
	var n roundTrips
	c.AddHook(&n)
	l, d := newStoreLocker(t, c, nil)
	for _, size := range []int{2, 8, 64} {
		keys, owners := make([]string, size), make([]string, size)
		for i := range keys {
			keys[i], owners[i] = fmt.Sprintf("n%d-%03d", size, i), fence.NewOwnerID()
		}
		if _, err := d.AcquireAll(ctx, []string{"warm-a", "warm-b"}, []string{"o", "o"}, time.Second); err != nil && !errors.Is(err, fence.ErrHeld) {
			t.Fatal(err) // caches the script
		}
		before := n.n.Load()
		leases, err := d.AcquireAll(ctx, keys, owners, time.Minute)
		if err != nil {
			t.Fatalf("AcquireAll of %d keys: %v", size, err)
		}
		if got := n.n.Load() - before; got != 1 {
			t.Errorf("AcquireAll of %d keys sent %d commands; want 1", size, got)
		}
		if err := d.Release(ctx, leases[size-1]); err != nil {
			t.Fatal(err)
		}
		before = n.n.Load()
		_, err = d.AcquireAll(ctx, keys, owners, time.Minute)
		if he, ok := errors.AsType[*fence.HeldError](err); !ok || he.Key != keys[0] || he.Token != leases[0].Token || he.Owner != owners[0] {
			t.Fatalf("AcquireAll of %d keys, all but the last held: %v; want a *fence.HeldError for %q", size, err, keys[0])
		}
		if got := n.n.Load() - before; got != 1 {
			t.Errorf("a refused AcquireAll of %d keys sent %d commands; want 1", size, got)
		}
		if info, err := l.Inspect(ctx, keys[size-1]); err != nil || info.Held || info.Token != leases[size-1].Token {
			t.Fatalf("the free key after a refused AcquireAll: %+v, %v; want free with token %d", info, err, leases[size-1].Token)
		}
	}
}

// TestKeySlot: keySlot gives the hash slots Redis Cluster's specification
// gives (CLUSTER KEYSLOT), hash tags included.
func TestKeySlot(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]int{
		"123456789":            0x31C3, // CRC16/XMODEM's check value
		"foo":                  12182,
		"{user1000}.following": keySlot("user1000"),
		"foo{}{bar}":           keySlot("foo{}{bar}"),
		"foo{{bar}}zap":        keySlot("{bar"),
		"foo{bar}{zap}":        keySlot("bar"),
	} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d; want %d", key, got, want)
		}
	}
	if keySlot("foo{}{bar}") == keySlot("bar") {
		t.Error(`keySlot("foo{}{bar}") hashes "bar"; an empty tag hashes the whole key`)
	}
}

// TestClusterAcquireAll runs on a one-node Redis Cluster of its own: a
// set whose keys share a hash slot (each starts with one "{tag}") is
// taken in one script, one whose keys do not is refused by AcquireAll
// with errors.ErrUnsupported (the server would refuse the script with
// CROSSSLOT, even on one node), and Session.LockAll takes such a set
// one key at a time.
func TestClusterAcquireAll(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := startServer(t, "redis-cluster", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	if err := s.c.Do(ctx, "cluster", "addslotsrange", "0", "16383").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the cluster to be ok", func() error {
		info, err := s.c.ClusterInfo(ctx).Result()
		if err == nil && !strings.Contains(info, "cluster_state:ok") {
			err = errors.New("cluster_state is not ok")
		}
		return err
	})
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{s.addr()}})
	t.Cleanup(func() { _ = c.Close() })
	l, d := newStoreLocker(t, c, nil)
	owners := []string{fence.NewOwnerID(), fence.NewOwnerID()}

	tagged := []string{"{job}:a", "{job}:b"}
	leases, err := d.AcquireAll(ctx, tagged, owners, time.Minute)
	if err != nil {
		t.Fatalf("AcquireAll of keys that share a slot: %v", err)
	}
	for _, lease := range leases {
		if err := d.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}

	apart := []string{"a", "b"}
	if keySlot(d.lockKey("a")) == keySlot(d.lockKey("b")) {
		t.Fatal("a and b share a slot; pick other keys")
	}
	if _, err := d.AcquireAll(ctx, apart, owners, time.Minute); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("AcquireAll of keys in two slots: %v; want an error matching errors.ErrUnsupported", err)
	}
	sess, err := fence.NewSession(l, &fence.SessionOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.WithoutCancel(ctx))
	hs, err := sess.LockAll(ctx, apart, nil)
	if err != nil || len(hs) != 2 {
		t.Fatalf("LockAll of keys in two slots: %d handles, %v", len(hs), err)
	}
	for _, h := range hs {
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHungServerPublishAndAcquireAll: against a server that accepts
// connections and never answers, the driver's Publish and AcquireAll
// return soon after their context ends, with an error (go-redis's
// i/o timeout: the portable layer wraps ctx.Err() around it).
func TestHungServerPublishAndAcquireAll(t *testing.T) {
	t.Parallel()
	c := goredis.NewClient(&goredis.Options{Addr: netfault.Hung(t).Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	_, d := newStoreLocker(t, c, nil)
	lease := fence.Lease{Key: "k", Owner: "o", Token: 7, TTL: time.Minute}
	for name, call := range map[string]func(context.Context) error{
		"Publish": func(ctx context.Context) error { return d.Publish(ctx, lease, "v") },
		"AcquireAll": func(ctx context.Context) error {
			_, err := d.AcquireAll(ctx, []string{"a", "b"}, []string{"o1", "o2"}, time.Minute)
			return err
		},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		start := time.Now()
		err := call(ctx)
		elapsed := time.Since(start)
		cancel()
		if err == nil {
			t.Errorf("%s against a hung server succeeded", name)
		}
		if elapsed > 3*time.Second {
			t.Errorf("%s against a hung server returned after %v; its context allowed 500ms", name, elapsed)
		}
	}
}
