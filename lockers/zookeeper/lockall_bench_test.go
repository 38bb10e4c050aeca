package zookeeper

import (
	"fmt"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/lockallbench"
)

// BenchmarkLockAll compares Session.LockAll of n keys (one
// multi-operation) with n Session.Lock calls one after another, each
// followed by the release of every handle, on the shared server, each
// side on a Locker and session of its own, alternating (see
// lockallbench.Run). Requests are not counted. Run it with
//
//	go test -run '^$' -bench LockAll -benchtime 300x -count 5 ./lockers/zookeeper/
func BenchmarkLockAll(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			root := uniqueRoot("bench-lockall")
			all := newTestLocker(b, connect(b, sharedServers(b), testSessionTimeout), &Options{Root: root})
			one := newTestLocker(b, connect(b, sharedServers(b), testSessionTimeout), &Options{Root: root})
			lockallbench.Run(b, n,
				lockallbench.Side{Locker: all.Locker},
				lockallbench.Side{Locker: one.Locker},
				5*time.Second)
		})
	}
}
