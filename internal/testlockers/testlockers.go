// Package testlockers builds real lockers on the test servers for tests
// that run one scenario on several stores (election, schedule). It is a
// package of its own because the lockers' own tests use internal/emulators.
package testlockers

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

// UniqueName returns prefix followed by random hex: a table name no other
// test uses.
func UniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// PostgresLockers returns n Lockers with opts (nil: the defaults; its Table
// is replaced) on one lease table named prefix plus random hex, each with a
// connection pool of its own like separate replicas. The table is created
// now and dropped when the test ends.
func PostgresLockers(t *testing.T, n int, prefix string, opts *postgres.Options) []fence.Locker {
	t.Helper()
	url := testenv.PostgresURL(t)
	o := postgres.Options{}
	if opts != nil {
		o = *opts
	}
	o.Table = UniqueName(prefix)
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
		l, err := postgres.New(pool, &o)
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

// DynamoLockers returns n Lockers with opts (nil: the defaults) on one
// lease table named prefix plus random hex in dynalite, each with a client
// and Observations of its own like separate replicas. The table is created
// now and deleted when the test ends.
func DynamoLockers(t *testing.T, n int, prefix string, opts *dynamo.Options) []fence.Locker {
	t.Helper()
	table := UniqueName(prefix)
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
