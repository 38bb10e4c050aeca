package redis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/handoffbench"
	"github.com/fencekit/fence/internal/testing/testenv"
)

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
	redsyncPeer := func(name string, opts ...redsync.Option) handoffbench.Peer {
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
		return handoffbench.Peer{Name: name, Take: h.TryLockContext, Wait: w.LockContext, Release: unlock(h), Done: unlock(w)}
	}
	handoffbench.Run(b,
		handoffbench.Fence(open(), open(), "k"),
		redsyncPeer("redsync"),
		redsyncPeer("redsync-1ms", redsync.WithTries(100000), redsync.WithRetryDelay(time.Millisecond)),
	)
}
