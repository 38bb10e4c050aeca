package postgres

import (
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/lockertest"
)

// shortTTL is the lease the tests let expire. Expiry is measured by the
// server's clock, which no fake clock can move, so Expire sleeps for it;
// it is short to keep that sleep short, and long enough that a lease does
// not run out between the statements of one case on a busy machine.
const shortTTL = 300 * time.Millisecond

// harness drives the conformance suite on one lease table of a unique name.
func harness(t *testing.T) lockertest.Harness {
	pool := newPool(t, contenders+2, nil)
	table := uniqueName("fence_test_")
	newLockerOn(t, pool, table)
	return lockertest.Harness{
		New: func(t *testing.T) *fence.Locker {
			l, err := New(pool, &Options{Table: table})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return l
		},
		TTL:      time.Minute,
		ShortTTL: shortTTL,
		// Every short lease was taken before Expire is called, so its
		// server expiry (receipt + ShortTTL) is at most ShortTTL away;
		// the margin covers timer granularity.
		Expire:    func(*testing.T) { time.Sleep(shortTTL + 20*time.Millisecond) },
		Pass:      func(_ *testing.T, d time.Duration) { time.Sleep(d) },
		MaxKeyLen: MaxKeyLen,
		BadTTLs:   []time.Duration{0, -time.Second, MinTTL - time.Microsecond, MaxTTL + time.Millisecond},
		// The lockers use the system clock for the times they report.
		Now:        time.Now,
		Contenders: contenders,
	}
}

// contenders is the number of goroutines racing for one key in the
// suite's one-winner cases, each with a connection of its own.
const contenders = 8

func TestConformance(t *testing.T) {
	t.Parallel()
	lockertest.Run(t, harness(t))
}
