package dynamo

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/probe"
	"github.com/fencekit/fence/internal/probe/probetest"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/internal/testing/lockallbench"
)

// The benchmarks run on the emulator (dynalite), so their times measure
// the client, the HTTP stack and dynalite, not DynamoDB; the round trips
// per operation carry over. Run them with
//
//	go test -run '^$' -bench . -benchtime 2s ./lockers/dynamo/
//
// with FENCE_DYNAMO_ENDPOINT set (scripts/emulators.sh).
//
// The issue asks for cirello.io/dynamolock (newest major version, v5) side
// by side; the module proxy refuses it here (403 Forbidden, "This module
// version is not available." for cirello.io/dynamolock/v2 and /v5), so
// BenchmarkBaseline stands in: the cheapest lock DynamoDB allows, a
// conditional PutItem and a DeleteItem with no token, no version and no
// expiry.

// benchLocker returns a Locker on a fresh table whose requests are counted.
func benchLocker(b *testing.B, trusted bool) (*testLocker, *faulty) {
	f := newFaulty(b)
	client := emulators.DynamoClient(b, f)
	table := newTable(b, client, nil)
	return newLocker(b, client, table, &Options{TrustedClock: trusted}), f
}

func reportTrips(b *testing.B, f *faulty, before int) {
	b.ReportMetric(float64(f.total()-before)/float64(b.N), "roundtrips/op")
}

// BenchmarkAcquireRelease takes and releases one key, one owner at a time.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, mode := range []struct {
		name    string
		trusted bool
	}{{"ClockFree", false}, {"TrustedClock", true}} {
		b.Run(mode.name, func(b *testing.B) {
			l, f := benchLocker(b, mode.trusted)
			before := f.total()
			b.ResetTimer()
			for b.Loop() {
				lease, err := l.Acquire(b.Context(), "bench", time.Minute, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(b.Context(), lease); err != nil {
					b.Fatal(err)
				}
			}
			reportTrips(b, f, before)
		})
	}
}

// BenchmarkAcquireHeld tries to take a held key: the cost a contender pays
// per try.
func BenchmarkAcquireHeld(b *testing.B) {
	l, f := benchLocker(b, false)
	if _, err := l.Acquire(b.Context(), "bench", time.Hour, nil); err != nil {
		b.Fatal(err)
	}
	before := f.total()
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Acquire(b.Context(), "bench", time.Minute, nil); !errors.Is(err, fence.ErrHeld) {
			b.Fatal(err)
		}
	}
	reportTrips(b, f, before)
}

// BenchmarkRenew renews one lease.
func BenchmarkRenew(b *testing.B) {
	l, f := benchLocker(b, false)
	lease, err := l.Acquire(b.Context(), "bench", time.Hour, nil)
	if err != nil {
		b.Fatal(err)
	}
	before := f.total()
	b.ResetTimer()
	for b.Loop() {
		if lease, err = l.Renew(b.Context(), lease); err != nil {
			b.Fatal(err)
		}
	}
	reportTrips(b, f, before)
}

// BenchmarkBaseline is the floor the locker is compared with: a lock made
// of a PutItem conditional on the item's absence and a DeleteItem, on the
// same emulator and client.
func BenchmarkBaseline(b *testing.B) {
	f := newFaulty(b)
	client := emulators.DynamoClient(b, f)
	table := newTable(b, client, nil)
	key := map[string]types.AttributeValue{DefaultKeyAttribute: &types.AttributeValueMemberS{Value: "bench"}}
	before := f.total()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		_, err := client.PutItem(b.Context(), &dynamodb.PutItemInput{
			TableName: aws.String(table),
			Item: map[string]types.AttributeValue{
				DefaultKeyAttribute: key[DefaultKeyAttribute],
				attrOwner:           &types.AttributeValueMemberS{Value: fmt.Sprint(i)},
			},
			ConditionExpression:      aws.String("attribute_not_exists(#k)"),
			ExpressionAttributeNames: map[string]string{"#k": DefaultKeyAttribute},
		})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := client.DeleteItem(b.Context(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key}); err != nil {
			b.Fatal(err)
		}
	}
	reportTrips(b, f, before)
}

// BenchmarkHandOff measures the hand-off from a holder to a Lock waiting
// through another client, waking on a probe (the default) or polling
// (ProbeInterval probe.Off), alternating (see probetest.HandOff):
//
//	go test -run '^$' -bench HandOff -benchtime 200x ./lockers/dynamo/
func BenchmarkHandOff(b *testing.B) {
	client := emulators.DynamoClient(b, nil)
	table := newTable(b, client, nil)
	holder := newLocker(b, client, table, nil)
	probed := newLocker(b, emulators.DynamoClient(b, nil), table, nil)
	polled := newLocker(b, emulators.DynamoClient(b, nil), table, &Options{ProbeInterval: probe.Off})
	probetest.HandOff(b, holder.Locker, probed.Locker, polled.Locker)
}

// BenchmarkLockAll compares Session.LockAll of 2 and 8 keys with as many
// Session.Lock calls one after another, each cycle with its release, on
// one table, each side on its own Locker and counting client,
// alternating (see lockallbench.Run). On an endpoint with transactions
// LockAll is one BatchGetItem and one TransactWriteItems; on dynalite,
// which has none, it takes the keys one at a time too. Run it with
//
//	go test -run '^$' -bench LockAll -benchtime 100x -count 5 ./lockers/dynamo/
func BenchmarkLockAll(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			plain := emulators.DynamoClient(b, nil)
			table := newTable(b, plain, nil)
			side := func() lockallbench.Side {
				f := newFaulty(b)
				l := newLocker(b, emulators.DynamoClient(b, f), table, nil)
				return lockallbench.Side{Locker: l.Locker, Requests: func() int64 { return int64(f.total()) }}
			}
			lockallbench.Run(b, n, side(), side(), time.Minute)
		})
	}
}

// BenchmarkPublishNotice measures how soon a follower's probe sees a
// Publish (see probetest.PublishNotice):
//
//	go test -run '^$' -bench PublishNotice -benchtime 200x ./lockers/dynamo/
func BenchmarkPublishNotice(b *testing.B) {
	client := emulators.DynamoClient(b, nil)
	table := newTable(b, client, nil)
	holder := newLocker(b, client, table, nil)
	follower := newLocker(b, emulators.DynamoClient(b, nil), table, nil)
	probetest.PublishNotice(b, holder.Locker, follower.Locker, time.Hour)
}
