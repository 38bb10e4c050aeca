package election_test

import (
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testlockers"
	"github.com/fencekit/fence/lockers/dynamo"
)

// store is a real lock store the real-time tests run on: lockers returns
// n Lockers on one fresh key space of it, each with a client of its own
// like separate replicas, cleaned up when the test ends.
type store struct {
	name    string
	lockers func(t *testing.T, n int) []fence.Locker
}

// stores are the real lock stores. DynamoDB runs in both expiry modes:
// clock-free (the default), where a follower takes over only after it has
// watched the last record version unchanged for a full TTL, and trusted
// clock, where it takes over once the stored expiry has passed. Either
// way the takeover comes after the partitioned leader's safety deadline
// (TTL minus the margin after its last renewal was sent), so the tests
// expect the same order of events of both; a resignation frees the key at
// once in both.
var stores = []store{
	{"postgres", func(t *testing.T, n int) []fence.Locker {
		t.Helper()
		return testlockers.PostgresLockers(t, n, "fence_election_", nil)
	}},
	{"dynamo clock-free", func(t *testing.T, n int) []fence.Locker {
		t.Helper()
		return testlockers.DynamoLockers(t, n, "fence-election-", nil)
	}},
	{"dynamo trusted clock", func(t *testing.T, n int) []fence.Locker {
		t.Helper()
		return testlockers.DynamoLockers(t, n, "fence-election-", &dynamo.Options{TrustedClock: true})
	}},
}
