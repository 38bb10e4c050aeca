package postgres

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/lockertest"
)

// shortTTL is the lease the tests let expire. Expiry is measured by the
// server's clock, which no fake clock can move, so Expire sleeps for it;
// it is short to keep that sleep short, and long enough that a lease does
// not run out between the statements of one case on a busy machine.
const shortTTL = 300 * time.Millisecond

// harness drives the conformance suite through w on one lease table of a
// unique name, which w's Create makes.
func harness(t *testing.T, w way) lockertest.Harness {
	open := w.newFunc(t, contenders+2)
	table := uniqueName("fence_test_")
	l, err := open(&Options{Table: table})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	if err := l.Create(t.Context()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	pool := newPool(t, 1, nil)
	t.Cleanup(func() { dropTable(t, pool, pgx.Identifier{table}.Sanitize()) })
	return lockertest.Harness{
		New: func(t *testing.T) *fence.Locker {
			l, err := open(&Options{Table: table})
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
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			lockertest.Run(t, harness(t, w))
		})
	}
}
