package redlock

import (
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/lockertest"
)

// shortTTL is the lease the tests let expire. The masters measure expiry
// on their own clocks, which no fake clock moves, so Expire sleeps.
const shortTTL = 200 * time.Millisecond

// TestConformance runs the locker suite on three durable masters;
// Restart kills all three with SIGKILL at once and starts them again.
func TestConformance(t *testing.T) {
	t.Parallel()
	ms := startMasters(t, 3, durable)
	var mu sync.Mutex
	lockertest.Run(t, lockertest.Harness{
		New: func(t *testing.T) fence.Locker {
			mu.Lock()
			defer mu.Unlock()
			return newLocker(t, ms, nil)
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
	})
}
