package redlock

import (
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/lockertest"
)

// shortTTL is the lease the tests let expire. The masters measure expiry
// on their own clocks, which no fake clock moves, so Expire sleeps; it is
// long enough that a lease renewed every ShortTTL/4 (the suite's Pass)
// does not run out on a machine busy with the race detector.
const shortTTL = 500 * time.Millisecond

// TestConformance runs the locker suite on three durable masters;
// Restart kills all three with SIGKILL at once and starts them again.
func TestConformance(t *testing.T) {
	t.Parallel()
	lockertest.Run(t, harness(t, startMasters(t, 3, durable), nil))
}

// TestConformanceFiveMastersStillProposals runs the suite on five
// durable masters with lockers that propose token 1 first on every
// attempt: each token after a key's first comes from the counters a
// quorum reported (a second round), across restarts too.
func TestConformanceFiveMastersStillProposals(t *testing.T) {
	t.Parallel()
	lockertest.Run(t, harness(t, startMasters(t, 5, durable), stillProposals))
}

// harness drives the suite on ms, with the lockers' stores passed
// through adjust (nil: as New makes them).
func harness(t *testing.T, ms []*master, adjust func(*store)) lockertest.Harness {
	var mu sync.Mutex
	return lockertest.Harness{
		New: func(t *testing.T) *fence.Locker {
			mu.Lock()
			defer mu.Unlock()
			l, d := newStoreLocker(t, ms, nil)
			if adjust != nil {
				adjust(d)
			}
			return l
		},
		TTL:      time.Minute,
		ShortTTL: shortTTL,
		// Every short lease was taken before Expire is called; the
		// masters end it ShortTTL (rounded up to a millisecond) after
		// they received it.
		Expire:     func(*testing.T) { time.Sleep(shortTTL + 20*time.Millisecond) },
		Pass:       func(_ *testing.T, d time.Duration) { time.Sleep(d) },
		MaxKeyLen:  MaxKeyLen,
		BadTTLs:    []time.Duration{0, -time.Second, MinTTL - time.Microsecond, MaxTTL + time.Millisecond},
		Now:        time.Now,
		Contenders: 8,
		Restart: func(t *testing.T) {
			for _, m := range ms {
				m.kill()
			}
			for _, m := range ms {
				m.restart(t)
			}
		},
	}
}
