package etcd

import (
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/lockallbench"
)

// BenchmarkLockAll compares Session.LockAll of n keys (one transaction)
// with n Session.Lock calls one after another, each followed by the
// release of every handle, on the shared server, each side on a Locker
// and client of its own, alternating (see lockallbench.Run). The LockAll
// side's requests are counted: req/lockall is its transaction, the
// releases not counted. Run it with
//
//	go test -run '^$' -bench LockAll -benchtime 200x -count 5 ./lockers/etcd/
func BenchmarkLockAll(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			var r requests
			prefix := uniquePrefix("bench-lockall")
			all := newTestLocker(b, countingClient(b, &r), &Options{Prefix: prefix})
			one := newTestLocker(b, sharedClient(b), &Options{Prefix: prefix})
			lockallbench.Run(b, n,
				lockallbench.Side{Locker: all.Locker, Requests: r.total},
				lockallbench.Side{Locker: one.Locker},
				10*time.Second)
		})
	}
}
