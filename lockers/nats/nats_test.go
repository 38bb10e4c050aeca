package nats

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/lockers/lockertest"
)

// Leases in the suite are timed by a fake clock: the server keeps no
// time for them (see the package doc, "Expiry without clocks"), so
// nothing sleeps for a lease.
const (
	testTTL      = time.Hour
	testShortTTL = time.Second
	contenders   = 8
)

// harness drives the conformance suite on a bucket of its own of the
// server at url. Its lockers share one fake clock and one Observations:
// what one saw counts for all, as in one process. restart, when set,
// restarts the server; Restart always reconnects and forgets what was
// seen, as a restarted process would.
func harness(t *testing.T, url string, replicas int, restart func(t *testing.T)) lockertest.Harness {
	top := t
	_, js := connect(t, url)
	var bucket string
	if err := retry(60*time.Second, func(ctx context.Context) error {
		bucket = uniqueBucket("suite")
		return CreateBucket(ctx, js, bucket, replicas)
	}); err != nil {
		t.Fatalf("create a bucket of %d replicas: %v", replicas, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = js.DeleteKeyValue(ctx, bucket)
	})
	clock := clocktest.New(time.Now())
	var (
		mu  sync.Mutex
		obs = clockfree.NewObservations()
	)
	locker := func(t *testing.T) testLocker {
		mu.Lock()
		defer mu.Unlock()
		return newTestLocker(t, js, bucket, &Options{Clock: clock}, obs)
	}
	return lockertest.Harness{
		New:      func(t *testing.T) *fence.Locker { return locker(t).Locker },
		TTL:      testTTL,
		ShortTTL: testShortTTL,
		Expire: func(t *testing.T) {
			// A clock-free Locker must first see a lease to time it:
			// look at every short lease held so far.
			l := locker(t)
			for _, key := range heldKeys(t, l.d, testShortTTL) {
				if _, err := l.Inspect(t.Context(), key); err != nil {
					t.Fatalf("Expire: Inspect(%q): %v", key, err)
				}
			}
			clock.Advance(testShortTTL + time.Millisecond)
		},
		Pass:       func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		MaxKeyLen:  MaxKeyLen,
		BadTTLs:    []time.Duration{0, -time.Second, MinTTL - time.Nanosecond, MaxTTL + time.Millisecond},
		Now:        clock.Now,
		Contenders: contenders,
		Restart: func(t *testing.T) {
			if restart != nil {
				restart(t)
			}
			_, fresh := connect(top, url) // for the rest of the run

			mu.Lock()
			defer mu.Unlock()
			js, obs = fresh, clockfree.NewObservations()
		},
	}
}

// heldKeys lists the lock keys of d's bucket held with a lease of at most
// max.
func heldKeys(t *testing.T, d *store, max time.Duration) []string {
	t.Helper()
	kv, err := d.bind(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	lister, err := kv.ListKeys(t.Context())
	if err != nil {
		t.Fatalf("list keys: %v", err)
	}
	var keys []string
	for name := range lister.Keys() {
		key, ok := lockKey(name)
		if !ok {
			continue
		}
		e, err := kv.Get(t.Context(), name)
		if err != nil {
			continue // deleted since
		}
		if r, err := parseRecord(key, e.Value(), e.Revision()); err == nil && r.held && r.ttl <= max {
			keys = append(keys, key)
		}
	}
	return keys
}

// TestConformance runs the suite on the shared server; its Restart
// reconnects (the shared server must not be restarted).
func TestConformance(t *testing.T) {
	t.Parallel()
	lockertest.Run(t, harness(t, sharedURL(t), 1, nil))
}

// TestConformanceServerRestart runs the suite on a server of its own
// (sync_interval: always), whose Restart kills it with SIGKILL and starts
// it again on its files: tokens keep increasing across it.
func TestConformanceServerRestart(t *testing.T) {
	t.Parallel()
	s := startServer(t, "restart", serverConfig{})
	lockertest.Run(t, harness(t, s.url, 1, func(t *testing.T) {
		s.Kill()
		s.restart(t)
		// JetStream recovers the streams before it answers for them.
		_, js := connect(t, s.url)
		if err := retry(30*time.Second, func(ctx context.Context) error { _, err := js.AccountInfo(ctx); return err }); err != nil {
			t.Fatalf("JetStream after the restart: %v", err)
		}
	}))
}

// TestNewRefusesBadSettings: New checks its arguments with
// fence.ErrInvalid, before any call.
func TestNewRefusesBadSettings(t *testing.T) {
	t.Parallel()
	_, js := connect(t, sharedURL(t))
	for _, c := range []struct {
		name   string
		js     jetstream.JetStream
		bucket string
		opts   *Options
	}{
		{"nil JetStream", nil, "locks", nil},
		{"empty bucket", js, "", nil},
		{"bucket with a dot", js, "a.b", nil},
		{"bucket of 65 bytes", js, strings.Repeat("b", 65), nil},
		{"no replicas", js, "locks", &Options{Replicas: -1}},
		{"six replicas", js, "locks", &Options{Replicas: 6}},
	} {
		if _, err := New(c.js, c.bucket, c.opts); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s: New = %v; want an error matching fence.ErrInvalid", c.name, err)
		}
	}
	if err := CreateBucket(t.Context(), js, "locks", 0); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("CreateBucket with 0 replicas = %v; want an error matching fence.ErrInvalid", err)
	}
}
