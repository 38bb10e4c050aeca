package mysql

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testing/lockallbench"
)

// BenchmarkLockAll compares, for 2 and 8 keys, a Session.LockAll of
// the keys and the release of its handles (one transaction for the keys,
// then one statement per release) with as many Session.Lock calls one
// after another and their releases, on one lease table, each side on a
// Locker and a pool of one connection of its own (so the wake-ups are
// off), alternating (see lockallbench.Run). Both sides count their
// statements (queries and executions of prepared statements, each one
// round trip). Run it with
//
//	go test -run '^$' -bench LockAll -benchtime 300x -count 5 ./lockers/mysql/
func BenchmarkLockAll(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run("keys="+strconv.Itoa(n), func(b *testing.B) {
			table := newTable(b, newDB(b, 1))
			name := strings.Trim(table.quotedTable(), "`")
			side := func() lockallbench.Side {
				var s statements
				l := newTestLocker(b, s.pool(b, 1), &Options{Table: name})
				b.Cleanup(func() { _ = l.Close() })
				return lockallbench.Side{Locker: l.Locker, Requests: s.count}
			}
			lockallbench.Run(b, n, side(), side(), time.Minute)
		})
	}
}
