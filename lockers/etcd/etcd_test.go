package etcd

import (
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/lockertest"
)

// expireMargin is how long after a lease's TTL the server has surely
// deleted its key: the leader looks for expired leases every 500 ms, then
// commits their revocation.
const expireMargin = time.Second

// harness drives the conformance suite through the client that client
// returns, under a prefix of
// its own, with leases of ShortTTL minTTL that the server expires (Expire
// sleeps for it).
func harness(client func() *clientv3.Client, minTTL time.Duration) lockertest.Harness {
	prefix := uniquePrefix("conformance")
	return lockertest.Harness{
		New: func(t *testing.T) fence.Locker {
			return newLocker(t, client(), &Options{Prefix: prefix, MinTTL: minTTL})
		},
		TTL:       time.Minute,
		ShortTTL:  minTTL,
		Expire:    func(*testing.T) { time.Sleep(minTTL + expireMargin) },
		Pass:      func(_ *testing.T, d time.Duration) { time.Sleep(d) },
		MaxKeyLen: MaxKeyLen,
		BadTTLs:   []time.Duration{0, -time.Second, minTTL - time.Millisecond, MaxTTL + time.Second},
		// The lockers use the system clock for the times they report.
		Now: time.Now,
	}
}

// TestConformance runs the suite on the shared test server, whose leases
// are at least DefaultMinTTL; its Restart closes the client and opens a
// new one (the shared server must not be restarted).
func TestConformance(t *testing.T) {
	t.Parallel()
	endpoints := sharedEndpoints(t)
	c := newClient(t, endpoints)
	h := harness(func() *clientv3.Client { return c }, DefaultMinTTL)
	// Restart runs alone, before the cases that call New.
	h.Restart = func(*testing.T) {
		_ = c.Close()
		c = newClient(t, endpoints) // closed when the whole test ends
	}
	lockertest.Run(t, h)
}

// TestConformanceServerRestart runs the suite on a one-member server of its
// own with an election timeout that lets it grant 1 s leases, and whose
// Restart kills the server with SIGKILL and starts it again on its data.
func TestConformanceServerRestart(t *testing.T) {
	t.Parallel()
	ms := startCluster(t, 1)
	c := newClient(t, endpointsOf(ms))
	h := harness(func() *clientv3.Client { return c }, time.Second)
	h.Restart = func(t *testing.T) {
		ms[0].proc.Kill()
		ms[0].proc.Restart()
		waitWritable(t, endpointsOf(ms))
	}
	lockertest.Run(t, h)
}
