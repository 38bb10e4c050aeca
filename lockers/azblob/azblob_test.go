package azblob

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/azblobconn/azuritetest"
	"github.com/fencekit/fence/lockers/lockertest"
)

// shortTTL is the lease the suite lets expire: Azure's shortest, 15 s,
// timed by Azurite. No fake clock can move it, so Expire really waits.
const shortTTL = MinTTL

// expiryMargin is how long after a short lease's end, as bounded below,
// Expire still waits: Azurite keeps times in milliseconds and compares
// them when it next looks at the blob.
const expiryMargin = 500 * time.Millisecond

// shortLeases records when the latest call that may have started or
// extended a lease of shortTTL returned: Azurite received the request
// before that, so the lease ends at most shortTTL later. Expire waits
// until then plus a margin, so that every such lease has run out, and
// cases that call Expire at about the same time share one wait instead of
// each waiting 15 s.
type shortLeases struct {
	mu   sync.Mutex
	last time.Time
}

// call runs f, a call made with ttl and ctx, and notes when it returned
// if it may have started or extended a short lease: unless ctx was done
// (nothing is sent) or f's error shows that no lease was taken or
// extended (fence.ErrInvalid; fence.ErrNotHeld from Renew).
func (s *shortLeases) call(ctx context.Context, ttl time.Duration, f func() error) {
	sends := ttl <= shortTTL && ctx.Err() == nil
	err := f()
	if !sends || errors.Is(err, fence.ErrInvalid) || errors.Is(err, fence.ErrNotHeld) {
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

// noting is the store under test with the calls that can start or
// extend a short lease noted; every call goes to the store as is.
type noting struct {
	*store
	s *shortLeases
}

func (n noting) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (lease fence.Lease, err error) {
	n.s.call(ctx, ttl, func() error { lease, err = n.store.Acquire(ctx, key, owner, ttl); return err })
	return lease, err
}

func (n noting) Renew(ctx context.Context, lease fence.Lease) (err error) {
	n.s.call(ctx, lease.TTL, func() error { err = n.store.Renew(ctx, lease); return err })
	return err
}

// TestConformance runs the locker suite on Azurite, with real 15 s leases
// that Azurite times and lets run out.
func TestConformance(t *testing.T) {
	t.Parallel()
	c := azuritetest.NewContainer(t, nil, true)
	s := &shortLeases{}
	start := time.Now()
	t.Cleanup(func() { t.Logf("the suite took %v", time.Since(start).Round(time.Millisecond)) })
	lockertest.Run(t, lockertest.Harness{
		New: func(t *testing.T) *fence.Locker {
			l, err := driver.NewLocker(noting{newLocker(t, c, nil).d, s}, nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return l
		},
		TTL:      MaxTTL,
		ShortTTL: shortTTL,
		Expire:   s.expire,
		// Azurite times the leases: time passes for real.
		Pass:      func(_ *testing.T, d time.Duration) { time.Sleep(d) },
		MaxKeyLen: MaxKeyLen,
		BadTTLs: []time.Duration{0, -time.Second, MinTTL - time.Second, MaxTTL + time.Second,
			MinTTL + time.Millisecond, time.Hour, -1},
		// The lockers use the system clock for the times they report.
		Now: time.Now,
	})
}
