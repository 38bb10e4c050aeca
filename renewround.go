package fence

// How a renewal round spreads its store calls: a driver that renews in
// batches gets one call per round; any other gets one call per lease,
// a bounded number of them in flight at once, each with a timeout of its
// own, so that a round of many leases takes about N/renewConcurrency
// round trips and no call waits on the others' time.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// renewConcurrency is the most store calls one renewal round has in
// flight at once. It is a few times the connections a client keeps by
// default (pgx: 4 or more, go-redis: 10 per core, the HTTP clients: tens)
// and well under what the stores serve from one client, so that a round
// of 10,000 leases at 5 ms a round trip takes about 1.5 s, inside the
// renewal interval of a 30 s lease, without queueing so many calls on a
// client's pool that they run into their own timeouts.
const renewConcurrency = 32

// each calls f(ctx, i) for every i in [0, n), at most renewConcurrency at
// once, each with a context of its own that ends timeout after the call
// starts (or with parent), and returns when every call has returned.
func each(parent context.Context, n int, timeout time.Duration, f func(ctx context.Context, i int)) {
	call := func(i int) {
		ctx, cancel := context.WithTimeout(parent, timeout)
		f(ctx, i)
		cancel()
	}
	workers := min(n, renewConcurrency)
	if workers <= 1 {
		for i := range n {
			call(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				call(i)
			}
		})
	}
	wg.Wait()
}
