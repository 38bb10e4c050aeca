package testlockers

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/emulators"
	"github.com/fencekit/fence/internal/testenv"
	"github.com/fencekit/fence/lockers/azblob"
	"github.com/fencekit/fence/lockers/dynamo"
	"github.com/fencekit/fence/lockers/gcs"
	"github.com/fencekit/fence/lockers/memory"
	"github.com/fencekit/fence/lockers/postgres"
)

// Backend is one lock store, in one expiry mode, that the layers above the
// lockers (guard, election, schedule, the fence command, the torture run)
// are tested on. Every such test ranges over Backends, so a new locker
// joins all of them by being added there once.
type Backend struct {
	// Name names the store and its mode in subtest names.
	Name string
	// MinTTL is the shortest lease the store accepts, the TTL of the
	// tests that let leases run out or outlive them.
	MinTTL time.Duration
	// ServerTimed is true when the store itself times leases (memory with
	// its injected clock, PostgreSQL, Azure, DynamoDB and Cloud Storage in
	// trusted-clock mode); false for the clock-free modes, where a
	// contender takes over only after watching one record version
	// unchanged for a full lease.
	ServerTimed bool
	// Lockers returns n Lockers on one fresh key space of the store (a
	// table, container or bucket created now and removed when the test
	// ends), each with a client of its own like separate replicas. clock
	// (nil: the system clock) is the Lockers' clock; on memory it also
	// times the leases.
	Lockers func(t *testing.T, n int, clock fence.Clock) []fence.Locker
	// URL returns the store URL of a fresh key space for the fence
	// command, not yet initialised (the caller runs `fence init`), removed
	// when the test ends; nil when the command cannot open the store.
	URL func(t *testing.T) string
}

// Run runs test on every store of Backends, as parallel subtests, with
// ttl the store's shortest lease but at least a second (so that renewals
// every TTL/3 keep up under the race detector on a busy machine): 1 s on
// memory, PostgreSQL and DynamoDB, 3 s on Cloud Storage, 15 s on Azure.
// Real-time tests scale every duration from ttl.
//
// On the clock-free stores (ServerTimed false) a contender takes over a
// lease that was not released only after it has watched one record
// version unchanged for a full TTL; on the others, once the stored expiry
// has passed. Either way that comes after the cut-off holder's safety
// deadline, and a released key is free at once on both, so a test can
// expect the same order of events of both.
func Run(t *testing.T, test func(t *testing.T, b Backend, ttl time.Duration)) {
	t.Helper()
	for _, b := range Backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			test(t, b, max(b.MinTTL, time.Second))
		})
	}
}

// Backends lists every lock store. It needs the servers and emulators of
// scripts/test.sh; a test over it fails under that script when one is
// missing and is skipped elsewhere.
var Backends = []Backend{
	{Name: "memory", MinTTL: memory.MinTTL, ServerTimed: true, Lockers: memoryLockers},
	{Name: "postgres", MinTTL: 200 * time.Millisecond, ServerTimed: true, Lockers: func(t *testing.T, n int, clock fence.Clock) []fence.Locker {
		t.Helper()
		return PostgresLockers(t, n, "fence_backend_", &postgres.Options{Clock: clock})
	}, URL: postgresURL},
	{Name: "dynamo-clock-free", MinTTL: dynamo.MinTTL, Lockers: func(t *testing.T, n int, clock fence.Clock) []fence.Locker {
		t.Helper()
		return DynamoLockers(t, n, "fence-backend-", &dynamo.Options{Clock: clock})
	}, URL: func(t *testing.T) string { return dynamoURL(t, "") }},
	{Name: "dynamo-trusted-clock", MinTTL: dynamo.MinTTL, ServerTimed: true, Lockers: func(t *testing.T, n int, clock fence.Clock) []fence.Locker {
		t.Helper()
		return DynamoLockers(t, n, "fence-backend-", &dynamo.Options{Clock: clock, TrustedClock: true})
	}, URL: func(t *testing.T) string { return dynamoURL(t, "&trusted-clock=true") }},
	{Name: "azblob", MinTTL: azblob.MinTTL, ServerTimed: true, Lockers: azblobLockers, URL: azblobURL},
	{Name: "gcs-clock-free", MinTTL: gcs.MinTTL, Lockers: func(t *testing.T, n int, clock fence.Clock) []fence.Locker {
		t.Helper()
		return GCSLockers(t, n, &gcs.Options{Clock: clock})
	}, URL: func(t *testing.T) string { return gcsURL(t, "") }},
	{Name: "gcs-trusted-clock", MinTTL: gcs.MinTTL, ServerTimed: true, Lockers: func(t *testing.T, n int, clock fence.Clock) []fence.Locker {
		t.Helper()
		return GCSLockers(t, n, &gcs.Options{Clock: clock, TrustedClock: true})
	}, URL: func(t *testing.T) string { return gcsURL(t, "&trusted-clock=true") }},
}

// memoryLockers returns n handles on one in-memory store: memory has no
// clients, so "replicas" share the store itself.
func memoryLockers(t *testing.T, n int, clock fence.Clock) []fence.Locker {
	t.Helper()
	store := memory.New(&memory.Options{Clock: clock})
	lockers := make([]fence.Locker, n)
	for i := range lockers {
		lockers[i] = store
	}
	return lockers
}

// AzblobLockers returns n Lockers with opts (nil: the defaults) on one
// container of Azurite named prefix plus random hex, each with a client of
// its own. The container is created now and deleted when the test ends.
func AzblobLockers(t *testing.T, n int, opts *azblob.Options) []fence.Locker {
	t.Helper()
	conn := testenv.AzuriteConnectionString(t)
	name := UniqueName("fence-backend-")
	lockers := make([]fence.Locker, n)
	for i := range lockers {
		c, err := container.NewClientFromConnectionString(conn, name, nil)
		if err != nil {
			t.Fatalf("container client: %v", err)
		}
		l, err := azblob.New(c, opts)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := l.CreateContainer(t.Context()); err != nil {
				t.Fatalf("CreateContainer: %v", err)
			}
			t.Cleanup(func() { deleteContainer(t, conn, name) })
		}
		lockers[i] = l
	}
	return lockers
}

func azblobLockers(t *testing.T, n int, clock fence.Clock) []fence.Locker {
	t.Helper()
	return AzblobLockers(t, n, &azblob.Options{Clock: clock})
}

// GCSLockers returns n Lockers with opts (nil: the defaults) on one bucket
// of fake-gcs-server, each with a client (and so Observations) of its own.
// The bucket is created now and removed with its objects when the test
// ends.
func GCSLockers(t *testing.T, n int, opts *gcs.Options) []fence.Locker {
	t.Helper()
	name := UniqueName("fence-backend-")
	lockers := make([]fence.Locker, n)
	for i := range lockers {
		b := gcsClient(t).Bucket(name)
		if i == 0 {
			if err := gcs.CreateBucket(t.Context(), b, "fence-test"); err != nil {
				t.Fatalf("CreateBucket: %v", err)
			}
			t.Cleanup(func() { removeBucket(t, name) })
		}
		l, err := gcs.New(b, opts)
		if err != nil {
			t.Fatal(err)
		}
		lockers[i] = l
	}
	return lockers
}

// newGCSClient returns a client of fake-gcs-server.
func newGCSClient(ctx context.Context, t *testing.T) (*storage.Client, error) {
	endpoint := testenv.GCSEndpoint(t)
	return storage.NewClient(ctx,
		option.WithEndpoint(strings.TrimSuffix(endpoint, "/")+"/storage/v1/"),
		option.WithoutAuthentication())
}

// gcsClient returns a client of fake-gcs-server, closed when the test
// ends.
func gcsClient(t *testing.T) *storage.Client {
	t.Helper()
	c, err := newGCSClient(context.Background(), t)
	if err != nil {
		t.Fatalf("storage.NewClient: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// WithQuery adds param ("name=value") to the query of URL u, which may
// have one already.
func WithQuery(u, param string) string {
	if strings.Contains(u, "?") {
		return u + "&" + param
	}
	return u + "?" + param
}

// ExecOnCleanup runs stmt on the PostgreSQL server at url, on a connection
// of its own, when the test ends (to drop what the test made there).
func ExecOnCleanup(t *testing.T, url, stmt string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("%s: %v", stmt, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Errorf("%s: %v", stmt, err)
		}
	})
}

func postgresURL(t *testing.T) string {
	t.Helper()
	base := testenv.PostgresURL(t)
	table := UniqueName("fence_cli_")
	ExecOnCleanup(t, base, "DROP TABLE IF EXISTS "+pgx.Identifier{table}.Sanitize())
	return WithQuery(base, "table="+table)
}

// dynamoURL names a fresh table on dynalite; extra adds query parameters
// (starting with &).
func dynamoURL(t *testing.T, extra string) string {
	t.Helper()
	endpoint := testenv.DynamoEndpoint(t)
	client := emulators.DynamoClient(t, nil)
	table := UniqueName("fence-cli-")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
		if _, missing := errors.AsType[*types.ResourceNotFoundException](err); err != nil && !missing {
			t.Errorf("delete table %s: %v", table, err)
		}
	})
	return "dynamodb://" + table + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint) + extra
}

// azblobURL names a fresh container on Azurite; the command finds Azurite
// through AZURE_STORAGE_CONNECTION_STRING.
func azblobURL(t *testing.T) string {
	t.Helper()
	conn := testenv.AzuriteConnectionString(t)
	name := UniqueName("fence-cli-")
	t.Cleanup(func() { deleteContainer(t, conn, name) })
	return "azblob://" + name
}

// gcsURL names a fresh bucket on fake-gcs-server; the command finds the
// emulator through STORAGE_EMULATOR_HOST. extra adds query parameters
// (starting with &).
func gcsURL(t *testing.T, extra string) string {
	t.Helper()
	testenv.GCSEndpoint(t)
	name := UniqueName("fence-cli-")
	t.Cleanup(func() { removeBucket(t, name) })
	return "gs://" + name + "?prefix=locks/" + extra
}

func deleteContainer(t *testing.T, conn, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := container.NewClientFromConnectionString(conn, name, nil)
	if err == nil {
		_, err = c.Delete(ctx, nil)
	}
	if err != nil && !strings.Contains(err.Error(), "ContainerNotFound") {
		t.Errorf("delete container %s: %v", name, err)
	}
}

// removeBucket deletes bucket name and its objects, if it exists.
func removeBucket(t *testing.T, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := newGCSClient(ctx, t)
	if err != nil {
		t.Errorf("remove bucket %s: %v", name, err)
		return
	}
	defer client.Close()
	b := client.Bucket(name)
	it := b.Objects(ctx, nil)
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if errors.Is(err, storage.ErrBucketNotExist) {
			return
		}
		if err != nil {
			t.Errorf("list bucket %s: %v", name, err)
			return
		}
		_ = b.Object(attrs.Name).Delete(ctx)
	}
	if err := b.Delete(ctx); err != nil && !errors.Is(err, storage.ErrBucketNotExist) {
		t.Errorf("delete bucket %s: %v", name, err)
	}
}
