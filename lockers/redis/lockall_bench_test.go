package redis

import (
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/lockallbench"
)

// BenchmarkLockAll compares Session.LockAll of n keys (one script) with n
// Session.Lock calls one after another, each followed by the release of
// every handle, on the shared server, each side on a Locker and client
// of its own, alternating (see lockallbench.Run). The LockAll side's
// commands are counted: req/lockall is its script, the releases not
// counted. Run it with
//
//	go test -run '^$' -bench LockAll -benchtime 500x -count 5 ./lockers/redis/
func BenchmarkLockAll(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			c := newClient(b)
			var rt roundTrips
			c.AddHook(&rt)
			prefix := uniquePrefix("bench-lockall")
			all := newLocker(b, c, &Options{Prefix: prefix})
			one := newLocker(b, newClient(b), &Options{Prefix: prefix})
			lockallbench.Run(b, n,
				lockallbench.Side{Locker: all, Requests: rt.n.Load},
				lockallbench.Side{Locker: one},
				10*time.Second)
		})
	}
}
