package main

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence/internal/emulators"
	"github.com/fencekit/fence/internal/testenv"
)

// backend is a store the command's tests run against: a fresh store URL
// per test, initialised with `fence init`, and the TTL to use there.
type backend struct {
	name string
	ttl  string
	// store returns the URL of a store of the test's own.
	store func(t *testing.T) string
}

// backends are the stores every behaviour test runs on: PostgreSQL and
// the DynamoDB emulator.
var backends = []backend{
	{name: "postgres", ttl: "1s", store: postgresStore},
	{name: "dynamodb", ttl: "1s", store: dynamoStore},
}

// withQuery adds a query parameter to a URL that may have a query already.
func withQuery(u, param string) string {
	if strings.Contains(u, "?") {
		return u + "&" + param
	}
	return u + "?" + param
}

// postgresStore returns a store URL with a lease table of the test's own,
// created with fence init and dropped when the test ends.
func postgresStore(t *testing.T) string {
	t.Helper()
	base := testenv.PostgresURL(t)
	table := uniqueName("fence_cli_")
	store := withQuery(base, "table="+table)
	wantCode(t, fenceRun(t, nil, "init", "--store", store), 0)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop %s: %v", table, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{table}.Sanitize()); err != nil {
			t.Errorf("drop %s: %v", table, err)
		}
	})
	return store
}

// dynamoStore returns a store URL naming a table of the test's own on
// dynalite, created with fence init and deleted when the test ends.
func dynamoStore(t *testing.T) string {
	t.Helper()
	endpoint := testenv.DynamoEndpoint(t)
	awsDefaults(t)
	client := emulators.DynamoClient(t, nil)
	table := uniqueName("fence-cli-")
	store := "dynamodb://" + table + "?endpoint=" + url.QueryEscape(endpoint)
	wantCode(t, fenceRun(t, nil, "init", "--store", store), 0)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
			t.Errorf("delete table %s: %v", table, err)
		}
	})
	return store
}

// awsDefaults fails the test unless the AWS SDK's default chain is
// pointed at the emulator as scripts/emulators.sh does (the command reads
// credentials only from there).
func awsDefaults(t *testing.T) {
	t.Helper()
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} {
		if os.Getenv(v) == "" {
			t.Fatalf("%s is unset; scripts/emulators.sh exports it with FENCE_DYNAMO_ENDPOINT", v)
		}
	}
}

// forEachBackend runs test on every backend, in parallel subtests.
func forEachBackend(t *testing.T, test func(t *testing.T, b backend, store string)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b, b.store(t))
		})
	}
}
