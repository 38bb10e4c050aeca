package dynamo

import (
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/lockers/lockertest"
)

// Leases in the suite are timed by a fake clock: neither mode reads
// DynamoDB's clock (it has none), so nothing sleeps for a lease.
const (
	testTTL      = time.Hour
	testShortTTL = time.Second
	testSkew     = 250 * time.Millisecond
	contenders   = 8
)

// harness drives the conformance suite on a table of its own, in
// clock-free or trusted-clock mode. Its lockers share one fake clock and
// one Observations: what one saw counts for all, as in one process.
func harness(t *testing.T, trusted bool) lockertest.Harness {
	client := emulators.DynamoClient(t, nil)
	table := newTable(t, client, nil)
	clock := clocktest.New(time.Now().Truncate(time.Millisecond))
	var skew time.Duration
	if trusted {
		skew = testSkew
	}
	var (
		mu  sync.Mutex
		api = suiteAPI(t, client)
		obs = clockfree.NewObservations()
	)
	locker := func(t *testing.T) *testLocker {
		mu.Lock()
		defer mu.Unlock()
		return newSeenLocker(t, api, table, &Options{Clock: clock, TrustedClock: trusted, MaxClockSkew: skew}, obs)
	}
	return lockertest.Harness{
		New:      func(t *testing.T) *fence.Locker { return locker(t).Locker },
		TTL:      testTTL,
		ShortTTL: testShortTTL,
		Expire: func(t *testing.T) {
			if !trusted {
				// A clock-free Locker must first see a lease to time
				// it: look at every short lease held so far.
				l := locker(t)
				for _, key := range heldKeys(t, client, table, testShortTTL) {
					if _, err := l.Inspect(t.Context(), key); err != nil {
						t.Fatalf("Expire: Inspect(%q): %v", key, err)
					}
				}
			}
			clock.Advance(testShortTTL + skew + time.Millisecond)
		},
		Pass:       func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		MaxKeyLen:  MaxKeyLen,
		BadTTLs:    []time.Duration{0, -time.Second, MinTTL - time.Nanosecond, MaxTTL + time.Millisecond},
		Now:        clock.Now,
		Contenders: contenders,
		// dynalite keeps its data in memory, so the store itself cannot
		// restart here; this reconnects and forgets all observations, as
		// a restarted process would.
		Restart: func(t *testing.T) {
			fresh := emulators.DynamoClient(t, nil)
			mu.Lock()
			defer mu.Unlock()
			api, obs = suiteAPI(t, fresh), clockfree.NewObservations()
		},
	}
}

// heldKeys lists the keys of table held with a lease of at most max.
func heldKeys(t *testing.T, client *dynamodb.Client, table string, max time.Duration) []string {
	t.Helper()
	pages := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{
		TableName:                aws.String(table),
		ConsistentRead:           aws.Bool(true),
		FilterExpression:         aws.String("#h = :true AND #l <= :max"),
		ExpressionAttributeNames: map[string]string{"#h": attrHeld, "#l": attrLease},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":true": &types.AttributeValueMemberBOOL{Value: true},
			":max":  millis(max),
		},
	})
	var keys []string
	for pages.HasMorePages() {
		page, err := pages.NextPage(t.Context())
		if err != nil {
			t.Fatalf("scan %q: %v", table, err)
		}
		for _, item := range page.Items {
			if k, ok := item[DefaultKeyAttribute].(*types.AttributeValueMemberS); ok {
				keys = append(keys, k.Value)
			}
		}
	}
	return keys
}

func TestConformance(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name    string
		trusted bool
	}{{"ClockFree", false}, {"TrustedClock", true}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			lockertest.Run(t, harness(t, mode.trusted))
		})
	}
}
