package schedule_test

import (
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testlockers"
	"github.com/fencekit/fence/lockers/dynamo"
	"github.com/fencekit/fence/lockers/postgres"
)

// store is a real lock store the tests run on: lockers returns n Lockers
// on one fresh key space of it, each with a client of its own like
// separate replicas, cleaned up when the test ends; clock (nil: the system
// clock) is the Lockers' clock. lease is the shortest lease the real-time
// tests use on it.
type store struct {
	name    string
	lockers func(t *testing.T, n int, clock fence.Clock) []fence.Locker
	lease   time.Duration
}

// stores are the real lock stores. DynamoDB runs in both expiry modes:
// clock-free (the default), where a replica takes over a dead replica's
// lock only after it has watched the record unchanged for a full lease,
// and trusted clock, where it takes over once the stored expiry has
// passed. Either way that comes after the dead replica's safety deadline,
// and a released lock is free at once, so the tests expect the same of
// both. DynamoDB's locker takes leases of a second at least.
var stores = []store{
	{"postgres", func(t *testing.T, n int, clock fence.Clock) []fence.Locker {
		t.Helper()
		// clock supplies the send times; the server's clock times the leases.
		return testlockers.PostgresLockers(t, n, "fence_schedule_", &postgres.Options{Clock: clock})
	}, 400 * time.Millisecond},
	{"dynamo clock-free", func(t *testing.T, n int, clock fence.Clock) []fence.Locker {
		t.Helper()
		return testlockers.DynamoLockers(t, n, "fence-schedule-", &dynamo.Options{Clock: clock})
	}, dynamo.MinTTL},
	{"dynamo trusted clock", func(t *testing.T, n int, clock fence.Clock) []fence.Locker {
		t.Helper()
		return testlockers.DynamoLockers(t, n, "fence-schedule-", &dynamo.Options{Clock: clock, TrustedClock: true})
	}, dynamo.MinTTL},
}
