package postgres

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// lockMany takes n keys named prefix + i through sess, with workers
// goroutines, and returns their handles.
func lockMany(t testing.TB, sess *fence.Session, prefix string, n, workers int) []*fence.Handle {
	t.Helper()
	handles := make([]*fence.Handle, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				handles[i], errs[i] = sess.Lock(context.Background(), prefix+strconv.Itoa(i), nil)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("TryLock %s%d: %v", prefix, i, err)
		}
	}
	return handles
}

// sessionLeases is the size of the session whose renewals are counted.
const sessionLeases = 1000

// TestSessionRenewsInOneStatement holds sessionLeases handles in one
// session with a 3 s TTL (a renewal round every second) and counts, with
// a pgx tracer, the statements the keepalive sends over three renewal
// intervals once the leases have fallen into step: at most one per
// interval (plus one for a round on the window's edge), each the batch
// renewal. Renewing lease by lease would send about 3,000.
func TestSessionRenewsInOneStatement(t *testing.T) {
	t.Parallel()
	var stmts statements
	pool := stmts.pool(t, 8)
	l := newTable(t, pool)
	const ttl = 3 * time.Second
	sess, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close(context.Background()) })
	handles := lockMany(t, sess, "many-", sessionLeases, 8)

	interval := ttl / 3 // the default RenewInterval
	time.Sleep(2 * interval)
	before, beforeBy := stmts.count()
	const intervals = 3
	time.Sleep(intervals * interval)
	after, afterBy := stmts.count()
	n := after - before
	t.Logf("%d statements in %d renewal intervals for %d leases", n, intervals, sessionLeases)
	if n > intervals+1 {
		t.Errorf("%d statements in %d renewal intervals, want at most %d", n, intervals, intervals+1)
		for sql, c := range afterBy {
			if d := c - beforeBy[sql]; d > 0 {
				t.Logf("%5d × %s", d, sql)
			}
		}
	}
	if n < intervals-1 {
		t.Errorf("%d statements in %d renewal intervals: the keepalive did not renew", n, intervals)
	}
	for sql, c := range afterBy {
		if c > beforeBy[sql] && !strings.HasPrefix(sql, "WITH r AS (") {
			t.Errorf("the keepalive sent %q, not the batch renewal", sql)
		}
	}
	for _, h := range handles {
		if err := h.Err(); err != nil {
			t.Fatalf("handle %s lost: %v", h.Key(), err)
		}
		if left := time.Until(h.Lease().ValidUntil); left < ttl-interval-time.Second {
			t.Fatalf("handle %s has %v left, want it renewed within the last interval", h.Key(), left)
		}
	}
}
