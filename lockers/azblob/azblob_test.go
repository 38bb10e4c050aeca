package azblob

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/lockertest"
)

// shortTTL is the lease the suite lets expire: Azure's shortest, 15 s,
// timed by Azurite. No fake clock can move it, so Expire really waits.
const shortTTL = MinTTL

// expiryMargin is how long after a short lease's send time plus shortTTL
// Expire still waits: Azurite starts the lease when it receives the
// request, a little after it was sent, and compares times in
// milliseconds.
const expiryMargin = time.Second

// shortLeases records when the latest request that may have started or
// extended a lease of shortTTL was sent, for Expire: a wait until then
// plus shortTTL lets every such lease run out, and cases that call Expire
// at about the same time share one wait instead of each waiting 15 s.
type shortLeases struct {
	mu   sync.Mutex
	last time.Time
}

func (s *shortLeases) note(ctx context.Context, ttl time.Duration) {
	if ttl > shortTTL || ctx.Err() != nil { // a done ctx sends nothing
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = time.Now()
}

// expire waits until every lease of shortTTL noted so far has run out.
func (s *shortLeases) expire(t *testing.T) {
	s.mu.Lock()
	until := s.last.Add(shortTTL + expiryMargin)
	s.mu.Unlock()
	if d := time.Until(until); d > 0 {
		t.Logf("Expire: waiting %v for the short leases to run out", d.Round(time.Millisecond))
		time.Sleep(d)
	}
}

// noting is the Locker under test with the calls that can start a short
// lease noted before they are made; every call goes to the Locker as is.
type noting struct {
	*Locker
	s *shortLeases
}

func (n noting) Acquire(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions) (fence.Lease, error) {
	n.s.note(ctx, ttl)
	return n.Locker.Acquire(ctx, key, ttl, opts)
}

func (n noting) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	n.s.note(ctx, lease.TTL)
	return n.Locker.Renew(ctx, lease)
}

// TestConformance runs the locker suite on Azurite, with real 15 s leases
// that Azurite times and lets run out.
func TestConformance(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil, true)
	s := &shortLeases{}
	start := time.Now()
	t.Cleanup(func() { t.Logf("the suite took %v", time.Since(start).Round(time.Millisecond)) })
	lockertest.Run(t, lockertest.Harness{
		New: func(t *testing.T) fence.Locker {
			return noting{newLocker(t, c, nil), s}
		},
		TTL:       MaxTTL,
		ShortTTL:  shortTTL,
		Expire:    s.expire,
		MaxKeyLen: MaxKeyLen,
		BadTTLs: []time.Duration{0, -time.Second, MinTTL - time.Second, MaxTTL + time.Second,
			MinTTL + time.Millisecond, time.Hour, -1},
		// The lockers use the system clock for the times they report.
		Now: time.Now,
	})
}
