package schedule_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/emulators"
	"github.com/fencekit/fence/internal/testenv"
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
	{"postgres", postgresLockers, 400 * time.Millisecond},
	{"dynamo clock-free", func(t *testing.T, n int, clock fence.Clock) []fence.Locker {
		t.Helper()
		return dynamoLockers(t, n, &dynamo.Options{Clock: clock})
	}, dynamo.MinTTL},
	{"dynamo trusted clock", func(t *testing.T, n int, clock fence.Clock) []fence.Locker {
		t.Helper()
		return dynamoLockers(t, n, &dynamo.Options{Clock: clock, TrustedClock: true})
	}, dynamo.MinTTL},
}

// uniqueName returns prefix followed by random hex: a table name no other
// test uses.
func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// postgresLockers returns n Lockers on one lease table of a unique name,
// each with a connection pool of its own like separate replicas. clock
// (nil: the system clock) supplies their send times; the server's clock
// times the leases. The table is dropped when the test ends.
func postgresLockers(t *testing.T, n int, clock fence.Clock) []fence.Locker {
	t.Helper()
	url := testenv.PostgresURL(t)
	table := uniqueName("fence_schedule_")
	lockers := make([]fence.Locker, n)
	for i := range lockers {
		cfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			t.Fatalf("parse FENCE_POSTGRES_URL: %v", err)
		}
		cfg.MaxConns = 2
		pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(pool.Close)
		l, err := postgres.New(pool, &postgres.Options{Table: table, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := l.CreateTable(t.Context()); err != nil {
				t.Fatalf("CreateTable: %v", err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+l.QuotedTable()); err != nil {
					t.Errorf("drop table: %v", err)
				}
			})
		}
		lockers[i] = l
	}
	return lockers
}

// dynamoLockers returns n Lockers with opts on one lease table of a
// unique name in dynalite, each with a client and Observations of its own
// like separate replicas. opts.Clock (nil: the system clock) times the
// leases, and in clock-free mode how long a record was seen unchanged.
// The table is deleted when the test ends.
func dynamoLockers(t *testing.T, n int, opts *dynamo.Options) []fence.Locker {
	t.Helper()
	table := uniqueName("fence-schedule-")
	lockers := make([]fence.Locker, n)
	for i := range lockers {
		client := emulators.DynamoClient(t, nil)
		if i == 0 {
			if err := dynamo.CreateTable(t.Context(), client, table, nil); err != nil {
				t.Fatalf("CreateTable: %v", err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
					t.Errorf("delete table: %v", err)
				}
			})
		}
		l, err := dynamo.New(client, table, opts)
		if err != nil {
			t.Fatal(err)
		}
		lockers[i] = l
	}
	return lockers
}
