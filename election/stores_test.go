package election_test

import (
	"testing"
	"time"

	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/internal/testlockers"
)

// onBackends runs test on every store of testlockers.Backends, as parallel
// subtests, with ttl the store's shortest lease but at least a second (so
// that renewals every TTL/3 keep up under the race detector on a busy
// machine): 1 s on memory, PostgreSQL and DynamoDB, 3 s on Cloud Storage,
// 15 s on Azure. The real-time tests scale every duration from ttl.
//
// On the clock-free stores (ServerTimed false) a candidate takes over a
// lease that was not released only after it has watched one record
// version unchanged for a full TTL; on the others, once the stored expiry
// has passed. Either way that comes after a cut-off leader's safety
// deadline, and a released key is free at once on both, so the tests
// expect the same order of events of both.
func onBackends(t *testing.T, test func(t *testing.T, b testlockers.Backend, ttl time.Duration)) {
	t.Helper()
	for _, b := range testlockers.Backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			test(t, b, max(b.MinTTL, time.Second))
		})
	}
}

// realTimeOptions are the options of the real-time tests for a lease of
// ttl: followers retry every TTL/10 (jittered), leaders renew every TTL/3
// (Cloud Storage's MinRenewInterval at its MinTTL) and step down by
// their safety deadline 0.6 TTL after their last renewal was sent.
func realTimeOptions(ttl time.Duration) election.Options {
	return election.Options{
		TTL:           ttl,
		RetryInterval: ttl / 10,
		Guard: guard.Options{
			RenewInterval:  ttl / 3,
			SafetyMargin:   ttl * 2 / 5,
			CallTimeout:    ttl / 5,
			ReleaseTimeout: ttl / 2,
		},
	}
}

// patience is how long the real-time tests wait for an event that takes
// up to a few TTLs.
func patience(ttl time.Duration) time.Duration {
	return 30*time.Second + 4*ttl
}
