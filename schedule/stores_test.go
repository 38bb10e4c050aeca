package schedule_test

import (
	"testing"
	"time"

	"github.com/fencekit/fence/internal/testlockers"
)

// onBackends runs test on every store of testlockers.Backends, as parallel
// subtests, with lease the store's shortest lease but at least a second
// (so that renewals every lease/3 keep up under the race detector on a
// busy machine): 1 s on memory, PostgreSQL and DynamoDB, 3 s on Cloud
// Storage, 15 s on Azure. The real-time tests scale every duration from
// lease.
//
// On the clock-free stores (ServerTimed false) a replica takes over a
// dead replica's lock only after it has watched one record version
// unchanged for a full lease; on the others, once the stored expiry has
// passed. Either way that comes after the dead replica's safety deadline,
// and a released lock is free at once on both, so the tests expect the
// same of both.
func onBackends(t *testing.T, test func(t *testing.T, b testlockers.Backend, lease time.Duration)) {
	t.Helper()
	for _, b := range testlockers.Backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			test(t, b, max(b.MinTTL, time.Second))
		})
	}
}

// patience is how long the real-time tests wait for an event that takes
// a few windows of a few leases.
func patience(lease time.Duration) time.Duration {
	return 30*time.Second + 8*lease
}

// offsetNow returns the Offset that starts a window of interval now, so
// that a real-time test begins at the start of a window instead of
// anywhere in it.
func offsetNow(interval time.Duration) time.Duration {
	return time.Duration(time.Now().UnixNano() % int64(interval))
}
