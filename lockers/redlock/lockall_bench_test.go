package redlock

import (
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/lockallbench"
)

// BenchmarkLockAll compares Session.LockAll of n keys with n Session.Lock
// calls one after another, each followed by the release of every handle,
// on three masters of the benchmark's own, each side on a Locker of its
// own, alternating (see lockallbench.Run). The store takes no set at once
// (see the package doc), so LockAll takes the keys one at a time in
// order: the figure is that path's cost over plain Locks, for reference.
// Requests are not counted. Run it with
//
//	go test -run '^$' -bench LockAll -benchtime 300x -count 5 ./lockers/redlock/
func BenchmarkLockAll(b *testing.B) {
	ms := startMasters(b, 3, volatile)
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			prefix := fmt.Sprintf("bench-lockall-%d:", n)
			all := newLocker(b, ms, &Options{Prefix: prefix})
			one := newLocker(b, ms, &Options{Prefix: prefix})
			lockallbench.Run(b, n,
				lockallbench.Side{Locker: all},
				lockallbench.Side{Locker: one},
				10*time.Second)
		})
	}
}
