package redis

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// handoffPeer is one way to hand a key from a holder to a waiter in
// another client: take makes the holder hold the key, wait blocks until
// the waiter holds it, release frees the holder's lock, and done frees
// the waiter's.
type handoffPeer struct {
	name                      string
	take, release, wait, done func(ctx context.Context) error
}

// BenchmarkHandoff measures hand-offs: a waiter blocked in another
// client, the holder releases, the time until the waiter's lock returns.
// Each iteration hands off once with each peer, in rotating order: fence
// (Session.Lock waiting, woken by the release's PUBLISH), redsync's
// Mutex.Lock with its default retries (32 tries, 50 to 250 ms apart),
// and redsync with a retry every millisecond. It reports each one's p50
// and p99 and fence's ratio to each. Run it with -benchtime 200x or more.
func BenchmarkHandoff(b *testing.B) {
	ctx := b.Context()
	const ttl = 10 * time.Second
	// Both sessions share a prefix: two processes of one application.
	prefix := uniquePrefix("handoff")
	open := func() *fence.Session {
		l, err := fence.OpenLocker(ctx, testenv.RedisURL(b)+"?prefix="+prefix, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = l.Close() })
		s, err := fence.NewSession(l, &fence.SessionOptions{TTL: ttl})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close(context.Background()) })
		return s
	}
	holder, waiter := open(), open()
	var held, got *fence.Handle
	fencePeer := handoffPeer{name: "fence",
		take: func(ctx context.Context) (err error) { held, err = holder.Lock(ctx, "k", nil); return err },
		wait: func(ctx context.Context) (err error) {
			got, err = waiter.Lock(ctx, "k", &fence.LockOptions{Wait: fence.WaitForever})
			return err
		},
		release: func(ctx context.Context) error { return held.Release(ctx) },
		done:    func(ctx context.Context) error { return got.Release(ctx) },
	}
	redsyncPeer := func(name string, opts ...redsync.Option) handoffPeer {
		key := uniquePrefix("redsync-handoff") + "k"
		mutex := func() *redsync.Mutex {
			c := matrixClient(b, testenv.RedisURL(b), shape{}, new(roundTrips))
			return redsync.New(redsyncgoredis.NewPool(c)).NewMutex(key, append([]redsync.Option{redsync.WithExpiry(ttl)}, opts...)...)
		}
		h, w := mutex(), mutex()
		unlock := func(m *redsync.Mutex) func(ctx context.Context) error {
			return func(ctx context.Context) error {
				ok, err := m.UnlockContext(ctx)
				if err == nil && !ok {
					err = fmt.Errorf("redsync: Unlock did not unlock")
				}
				return err
			}
		}
		return handoffPeer{name: name, take: h.TryLockContext, wait: w.LockContext, release: unlock(h), done: unlock(w)}
	}
	peers := []handoffPeer{
		fencePeer,
		redsyncPeer("redsync"),
		redsyncPeer("redsync-1ms", redsync.WithTries(100000), redsync.WithRetryDelay(time.Millisecond)),
	}
	lat := make([][]time.Duration, len(peers))
	handoff := func(p handoffPeer) time.Duration {
		if err := p.take(ctx); err != nil {
			b.Fatalf("%s: take: %v", p.name, err)
		}
		woke := make(chan time.Time, 1)
		errc := make(chan error, 1)
		go func() {
			err := p.wait(ctx)
			woke <- time.Now()
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond) // the waiter is waiting
		start := time.Now()
		if err := p.release(ctx); err != nil {
			b.Fatalf("%s: release: %v", p.name, err)
		}
		end := <-woke
		if err := <-errc; err != nil {
			b.Fatalf("%s: wait: %v", p.name, err)
		}
		if err := p.done(ctx); err != nil {
			b.Fatalf("%s: release by the waiter: %v", p.name, err)
		}
		return end.Sub(start)
	}
	for i := range peers { // warm: connections, scripts, subscriptions
		handoff(peers[i])
	}
	for i := 0; b.Loop(); i++ {
		for j := range peers {
			k := (i + j) % len(peers)
			lat[k] = append(lat[k], handoff(peers[k]))
		}
	}
	pct := func(d []time.Duration, p float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, int(p*float64(len(s))))]
	}
	for j, p := range peers {
		b.ReportMetric(float64(pct(lat[j], 0.5).Microseconds()), p.name+"-p50-µs")
		b.ReportMetric(float64(pct(lat[j], 0.99).Microseconds()), p.name+"-p99-µs")
		if j > 0 {
			b.ReportMetric(float64(pct(lat[0], 0.5))/float64(pct(lat[j], 0.5)), "fence/"+p.name+"-p50")
		}
	}
}
