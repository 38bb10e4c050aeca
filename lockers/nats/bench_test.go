package nats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/handoffbench"
)

// BenchmarkAcquireRelease measures one Acquire and one Release of a free
// key on the shared server (sync_interval: always) against the floor of
// the same store: a plain KV Create of a new key and a Delete of it, two
// synced writes as well. Each iteration runs one cycle of each, in
// alternating order, so that the machine's drift moves both alike; it
// reports the median of each one's time and of their ratio:
//
//	go test -run '^$' -bench AcquireRelease -benchtime 300x -count 5 ./lockers/nats
func BenchmarkAcquireRelease(b *testing.B) {
	ctx := b.Context()
	_, js := connect(b, sharedURL(b))
	bucket := newBucket(b, js, "bench", 1)
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		b.Fatal(err)
	}
	l := newTestLocker(b, js, bucket, nil, nil)
	run := fmt.Sprint(time.Now().UnixNano())
	paired(b, "fence", "floor", func(int) {
		lease, err := l.Acquire(ctx, "bench", time.Minute, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx, lease); err != nil {
			b.Fatal(err)
		}
	}, func(i int) {
		name := fmt.Sprintf("floor-%s-%d", run, i)
		if _, err := kv.Create(ctx, name, []byte("x")); err != nil {
			b.Fatal(err)
		}
		if err := kv.Delete(ctx, name); err != nil {
			b.Fatal(err)
		}
	})
}

// paired runs a(i) and z(i) once per iteration, in alternating order, and
// reports the median of a's and z's times and of their ratio.
func paired(b *testing.B, aName, zName string, a, z func(i int)) {
	b.Helper()
	var ta, tz, ratios []float64
	timed := func(f func(int), i int) float64 {
		start := time.Now()
		f(i)
		return float64(time.Since(start))
	}
	a(-1) // warm: the bucket bound, the key known
	z(-1)
	for i := 0; b.Loop(); i++ {
		var x, y float64
		if i%2 == 0 {
			x, y = timed(a, i), timed(z, i)
		} else {
			y, x = timed(z, i), timed(a, i)
		}
		ta, tz, ratios = append(ta, x), append(tz, y), append(ratios, x/y)
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(median(ta)/1e3, aName+"-µs")
	b.ReportMetric(median(tz)/1e3, zName+"-µs")
	b.ReportMetric(median(ratios), aName+"/"+zName)
}

// BenchmarkHandoff measures hand-offs: a waiter blocked in another
// connection, the holder releases, the time until the waiter's lock
// returns. Each iteration hands off once with each peer, in rotating
// order: fence (Session.Lock waiting, woken by its KV watch), and the
// floor of a lock on the same bucket: a KV Create to take, a Delete to
// release, the waiter watching the key and creating it when it sees the
// delete. It reports each one's p50 and p99 and fence's ratio to the
// floor:
//
//	go test -run '^$' -bench 'Handoff' -benchtime 200x -count 5 ./lockers/nats
func BenchmarkHandoff(b *testing.B) {
	ctx := b.Context()
	url := sharedURL(b)
	_, admin := connect(b, url)
	bucket := newBucket(b, admin, "handoff", 1)
	const ttl = 10 * time.Second
	open := func() *fence.Session {
		_, js := connect(b, url)
		l := newTestLocker(b, js, bucket, nil, nil)
		s, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: ttl})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close(context.Background()) })
		return s
	}
	kvOf := func() jetstream.KeyValue {
		_, js := connect(b, url)
		kv, err := js.KeyValue(ctx, bucket)
		if err != nil {
			b.Fatal(err)
		}
		return kv
	}
	holder, waiter := open(), open()
	hkv, wkv := kvOf(), kvOf()
	const floorKey = "floor"
	floorPeer := handoffbench.Peer{Name: "kv-floor",
		Take: func(ctx context.Context) error { _, err := hkv.Create(ctx, floorKey, []byte("h")); return err },
		Wait: func(ctx context.Context) error {
			w, err := wkv.Watch(ctx, floorKey)
			if err != nil {
				return err
			}
			defer func() { _ = w.Stop() }()
			for e := range w.Updates() {
				if e == nil || e.Operation() == jetstream.KeyValuePut {
					continue
				}
				_, err := wkv.Create(ctx, floorKey, []byte("w"))
				return err
			}
			return errors.New("the watch ended")
		},
		Release: func(ctx context.Context) error { return hkv.Delete(ctx, floorKey) },
		Done:    func(ctx context.Context) error { return wkv.Delete(ctx, floorKey) },
	}
	handoffbench.Run(b, handoffbench.Fence(holder, waiter, "k"), floorPeer)
}

// BenchmarkSyncCost measures what sync_interval: always costs: one
// Acquire and one Release of a free key on a server of the benchmark's
// own configured so, against the same on a server left at the default
// (syncs every two minutes), side by side in one loop:
//
//	go test -run '^$' -bench SyncCost -benchtime 300x -count 5 ./lockers/nats
func BenchmarkSyncCost(b *testing.B) {
	ctx := b.Context()
	cycle := func(cfg serverConfig, name string) func(int) {
		s := startServer(b, name, cfg)
		_, js := connect(b, s.url)
		l := newTestLocker(b, js, newBucket(b, js, "sync", 1), nil, nil)
		return func(int) {
			lease, err := l.Acquire(ctx, "bench", time.Minute, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}
	}
	paired(b, "synced", "unsynced", cycle(serverConfig{}, "synced"), cycle(serverConfig{unsynced: true}, "unsynced"))
}
