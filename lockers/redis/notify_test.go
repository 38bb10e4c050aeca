package redis

import (
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/waittest"
)

// twoLockers returns two Lockers on one prefix through two clients: the
// views of two processes; and the store under b.
func twoLockers(t testing.TB) (a, b *fence.Locker, bd *store) {
	t.Helper()
	prefix := uniquePrefix("notify")
	a = newLocker(t, newClient(t), &Options{Prefix: prefix})
	b, bd = newStoreLocker(t, newClient(t), &Options{Prefix: prefix})
	return a, b, bd
}

// TestLockWokenByRelease: a Lock waiting through another Locker (its own
// client, as in another process), polling once an hour, gets the key soon
// after the holder releases it, or an operator breaks it.
func TestLockWokenByRelease(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"release", "break"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			a, b, _ := twoLockers(t)
			waittest.WokenByFree(t, a, b, how)
		})
	}
}

// TestNotifyReleaseActiveOnReturn: a release right after NotifyRelease
// returned is heard, each time the subscription is made afresh; a release
// of another key is not.
func TestNotifyReleaseActiveOnReturn(t *testing.T) {
	t.Parallel()
	a, _, b := twoLockers(t)
	ctx := t.Context()
	for i := range 5 {
		other, err := a.Acquire(ctx, "other", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		lease, err := a.Acquire(ctx, "k", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, stop, err := b.NotifyRelease(ctx, "k")
		if err != nil {
			t.Fatalf("NotifyRelease: %v", err)
		}
		if err := a.Release(ctx, other); err != nil {
			t.Fatal(err)
		}
		if err := a.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c:
		case <-time.After(waittest.WakeBound):
			t.Fatalf("release %d not notified", i)
		}
		stop()
		if n := subscribers(t, b); n != 0 {
			t.Fatalf("%d subscribers to %s after the last waiter stopped; want 0", n, b.channel)
		}
	}
}

// subscribers returns how many connections subscribe to d's channel.
func subscribers(t *testing.T, d *store) int64 {
	t.Helper()
	m, err := newClient(t).PubSubNumSub(t.Context(), d.channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[d.channel]
}

// TestSubscriptionReconnects: when the subscribed connection is killed,
// go-redis subscribes again, every waiter asks the server again, and a
// waiter still gets the key by notification after the holder releases it.
func TestSubscriptionReconnects(t *testing.T) {
	t.Parallel()
	prefix := uniquePrefix("reconnect")
	a := newLocker(t, newClient(t), &Options{Prefix: prefix})
	// b's connections carry a name, so that the test finds its
	// subscription among those of other tests on the shared server.
	o, err := goredis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	o.ClientName = strings.TrimSuffix(prefix, ":")
	cb := goredis.NewClient(o)
	t.Cleanup(func() { _ = cb.Close() })
	b, bd := newStoreLocker(t, cb, &Options{Prefix: prefix})
	holder, err := waittest.NewSession(t, a, &fence.SessionOptions{TTL: time.Minute}).Lock(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	result, busy := waittest.StartLock(t, b, "k", waittest.Waiting)
	if n := subscribers(t, bd); n != 1 {
		t.Fatalf("%d subscribers while a Lock waits; want 1", n)
	}
	c := newClient(t)
	list, err := c.ClientList(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for line := range strings.SplitSeq(list, "\n") {
		if strings.Contains(line, " name="+o.ClientName+" ") && strings.Contains(line, " sub=1 ") {
			id, _, _ := strings.Cut(strings.TrimPrefix(line, "id="), " ")
			if err := c.Do(t.Context(), "CLIENT", "KILL", "ID", id).Err(); err != nil {
				t.Fatal(err)
			}
			killed++
		}
	}
	if killed != 1 {
		t.Fatalf("killed %d subscribed connections of b; want 1:\n%s", killed, list)
	}
	deadline := time.Now().Add(waittest.WakeBound)
	for busy.Load() < 2 || subscribers(t, bd) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("after the kill: %d attempts, %d subscribers; want the waiter to ask again and the subscription back", busy.Load(), subscribers(t, bd))
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // let the waiter settle into its wait
	if err := holder.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := waittest.Wait(t, result, waittest.WakeBound)
	_ = r.Handle.Release(t.Context())
}
