package etcd

import (
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
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
		New: func(t *testing.T) *fence.Locker {
			return newTestLocker(t, client(), &Options{Prefix: prefix, MinTTL: minTTL}).Locker
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

// TestLayering: New returns the portable locker over the etcd driver,
// with the Info its options give, and its As gives the client and
// nothing else.
func TestLayering(t *testing.T) {
	t.Parallel()
	c := sharedClient(t)
	if _, err := New(nil, nil); !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New(nil client): %v, want ErrInvalid", err)
	}
	l, err := New(c, &Options{MinTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := driver.Info{Name: "etcd", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: time.Second, MaxTTL: MaxTTL}
	if info := driver.InfoOf(l); info != want {
		t.Errorf("Info = %+v, want %+v", info, want)
	}
	var got *clientv3.Client
	if !l.As(&got) || got != c {
		t.Errorf("As(**clientv3.Client) gave %p, want the client %p", got, c)
	}
	var s string
	if l.As(&s) || l.As(nil) || l.As(got) {
		t.Error("As gave a value for a *string, nil or a *clientv3.Client")
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := c.Get(t.Context(), "fence-test/ready"); err != nil {
		t.Errorf("the caller's client after the Locker's Close: %v", err)
	}
}
