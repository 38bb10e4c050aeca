package redis

import (
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/lockertest"
)

// shortTTL is the lease the tests let expire. Expiry is measured by the
// server's clock, which no fake clock can move, so Expire sleeps for it.
const shortTTL = 300 * time.Millisecond

// harness drives the conformance suite on client c (of the shared server
// or of a server of the test's own) under one unique prefix.
func harness(t *testing.T, newClient func(t *testing.T) *fence.Locker) lockertest.Harness {
	return lockertest.Harness{
		New:      newClient,
		TTL:      time.Minute,
		ShortTTL: shortTTL,
		// Every short lease was taken before Expire is called, so its
		// server expiry (receipt + ShortTTL) is at most ShortTTL away;
		// the margin covers Redis's expiry granularity.
		Expire:    func(*testing.T) { time.Sleep(shortTTL + 20*time.Millisecond) },
		Pass:      func(_ *testing.T, d time.Duration) { time.Sleep(d) },
		MaxKeyLen: MaxKeyLen,
		BadTTLs:   []time.Duration{0, -time.Second, MinTTL - time.Microsecond, MaxTTL + time.Millisecond},
		Now:       time.Now,
	}
}

// TestConformance runs the locker suite on the shared server.
func TestConformance(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	prefix := uniquePrefix("conf")
	lockertest.Run(t, harness(t, func(t *testing.T) *fence.Locker {
		return newLocker(t, c, &Options{Prefix: prefix})
	}))
}

// TestConformancePersistent runs the suite on a server of its own that
// keeps an append-only file synced on every write (appendfsync always),
// with Restart killing it with SIGKILL and starting it again: tokens
// continue across the crash because every acknowledged script is on disk.
func TestConformancePersistent(t *testing.T) {
	t.Parallel()
	s := startServer(t, "redis-aof", "--appendonly", "yes", "--appendfsync", "always")
	c := s.client(t)
	prefix := uniquePrefix("aof")
	h := harness(t, func(t *testing.T) *fence.Locker {
		return newLocker(t, c, &Options{Prefix: prefix})
	})
	h.Restart = func(t *testing.T) {
		s.Kill()
		s.Restart()
		s.waitUp(t)
	}
	lockertest.Run(t, h)
}
