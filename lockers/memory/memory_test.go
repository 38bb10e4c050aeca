package memory_test

import (
	"os"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/testing/leakcheck"
	"github.com/fencekit/fence/lockers/lockertest"
	"github.com/fencekit/fence/lockers/memory"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store := memory.New(&memory.Options{Clock: clock})
	const shortTTL = time.Second
	lockertest.Run(t, lockertest.Harness{
		// One Locker is one store: every Locker from New is the same.
		New: func(*testing.T) *fence.Locker { return store },
		// Cases run in parallel on the one fake clock, so every case's
		// Expire moves time for all of them: TTL is far longer than the
		// sum of all Expires of a run.
		TTL:       time.Hour,
		ShortTTL:  shortTTL,
		Expire:    func(*testing.T) { clock.Advance(shortTTL + time.Millisecond) },
		Pass:      func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		MaxKeyLen: memory.MaxKeyLen,
		BadTTLs:   []time.Duration{0, -time.Millisecond, memory.MinTTL - time.Nanosecond, memory.MaxTTL + time.Nanosecond},
		Now:       clock.Now,
	})
}

// TestMain fails the package when goroutines outlive its tests, such as a
// racing contender of the conformance suite left behind.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.MainAll(m))
}
