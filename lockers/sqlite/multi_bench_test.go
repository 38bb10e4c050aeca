package sqlite_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/lockallbench"
)

// BenchmarkLockAll compares, for 2 and 8 keys, a Session.LockAll of
// the keys and the release of its handles (one write transaction for the
// keys, then one statement per release) with as many Session.Lock calls
// one after another and their releases, on one file, each side on a
// Locker (a database) of its own, alternating (see lockallbench.Run).
// Statements are not counted. Run it with
//
//	go test -run '^$' -bench LockAll -benchtime 300x -count 5 ./lockers/sqlite/
func BenchmarkLockAll(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run("keys="+strconv.Itoa(n), func(b *testing.B) {
			url := "sqlite://" + b.TempDir() + "/locks.db"
			side := func() lockallbench.Side {
				l, err := fence.OpenLocker(b.Context(), url, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = l.Close() })
				return lockallbench.Side{Locker: l}
			}
			lockallbench.Run(b, n, side(), side(), time.Minute)
		})
	}
}
