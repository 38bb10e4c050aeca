package testlockers

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/gcsbucket"
	"github.com/fencekit/fence/internal/redact"
	"github.com/fencekit/fence/internal/testing/emulators"
	"github.com/fencekit/fence/internal/testing/kubetest"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/lockers/azblob"
	"github.com/fencekit/fence/lockers/dynamo"
	"github.com/fencekit/fence/lockers/etcd"
	"github.com/fencekit/fence/lockers/gcs"
	"github.com/fencekit/fence/lockers/kubernetes"
	"github.com/fencekit/fence/lockers/memory"
	_ "github.com/fencekit/fence/lockers/mysql"        // mysql://
	fencenats "github.com/fencekit/fence/lockers/nats" // nats://
	"github.com/fencekit/fence/lockers/postgres"       // postgres://
	_ "github.com/fencekit/fence/lockers/redis"        // redis://
	_ "github.com/fencekit/fence/lockers/redlock"      // redlock://
	fences3 "github.com/fencekit/fence/lockers/s3"     // s3://
	_ "github.com/fencekit/fence/lockers/sqlite"       // sqlite://
	_ "github.com/fencekit/fence/lockers/zookeeper"    // zk://
)

// Backend is one lock store, in one expiry mode, that the layers above the
// lockers (guard, election, schedule, the fence command, the torture run)
// are tested on. Every such test ranges over Backends, so a new locker
// joins all of them by being added there once, with the URL of a fresh
// key space: the lockers are opened from it with fence.OpenLocker,
// like any program opens them (or with Open, for a constructor no URL
// names).
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
	// InProcess is true for a store that lives in the test's process
	// (memory): every locker opened from one URL shares it, and the fence
	// command, another process, cannot reach it.
	InProcess bool
	// Keyspace is true for a store with nothing to create (etcd, Redis):
	// its URL names a key prefix, which exists as soon as a key is
	// written, and Create returns an error matching
	// errors.ErrUnsupported.
	Keyspace bool
	// File is true for a store in a file on this host (SQLite): opening
	// makes it, so it is never missing and Create finds it made, and it
	// has no server to be unreachable.
	File bool
	// URL returns the URL of a fresh key space of the store (a table,
	// container or bucket not created yet, or a prefix no key has yet),
	// removed when the test ends.
	URL func(t testing.TB) string
	// Open, when set, opens a Locker on URL's store in place of
	// fence.OpenLocker, for a way in that no URL names; what it opens is
	// closed when the test ends. The fence command opens URL itself.
	Open func(t testing.TB, url string, clock fence.Clock) *fence.Locker
}

// Lockers returns n Lockers opened from one fresh URL of b, each with a
// client of its own like separate replicas (on memory they share the
// store itself), after creating the store. clock (nil: the system clock)
// is the Lockers' clock; on memory it also times the leases.
func (b Backend) Lockers(t testing.TB, n int, clock fence.Clock) []*fence.Locker {
	t.Helper()
	url := b.URL(t)
	lockers := make([]*fence.Locker, n)
	for i := range lockers {
		l := b.OpenLocker(t, url, clock)
		if i == 0 && !b.InProcess {
			if err := l.Create(t.Context()); err != nil && !(b.Keyspace && errors.Is(err, errors.ErrUnsupported)) {
				t.Fatalf("create %s: %v", redact.URL(url), err)
			}
		}
		lockers[i] = l
	}
	return lockers
}

// OpenLocker opens a Locker on the store at url (one of b.URL), as
// Lockers does, closed when the test ends.
func (b Backend) OpenLocker(t testing.TB, url string, clock fence.Clock) *fence.Locker {
	t.Helper()
	if b.Open != nil {
		return b.Open(t, url, clock)
	}
	l, err := fence.OpenLocker(t.Context(), url, &fence.OpenOptions{Clock: clock})
	if err != nil {
		t.Fatalf("open %s: %v", redact.URL(url), err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// Run runs test on every store of Backends, as parallel subtests, with
// ttl the store's shortest lease but at least a second (so that renewals
// every TTL/3 keep up under the race detector on a busy machine): 1 s on
// memory, PostgreSQL, DynamoDB, Redis, Redlock, SQLite and NATS, 2 s on etcd,
// 3 s on Cloud Storage, 15 s on Azure.
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
	{Name: "memory", MinTTL: memory.MinTTL, ServerTimed: true, InProcess: true, URL: func(testing.TB) string { return "mem://" + UniqueName("backend-") }},
	// PostgreSQL takes leases of 100 ms, but a test's renewals every
	// TTL/3 must keep up on a loaded 2-core machine with the race
	// detector.
	{Name: "postgres", MinTTL: time.Second, ServerTimed: true, URL: postgresURL},
	{Name: "dynamo-clock-free", MinTTL: dynamo.MinTTL, URL: func(t testing.TB) string { return dynamoURL(t, "") }},
	{Name: "dynamo-trusted-clock", MinTTL: dynamo.MinTTL, ServerTimed: true, URL: func(t testing.TB) string { return dynamoURL(t, "&trusted-clock=true") }},
	{Name: "azblob", MinTTL: azblob.MinTTL, ServerTimed: true, URL: azblobURL},
	{Name: "gcs-clock-free", MinTTL: gcs.MinTTL, URL: func(t testing.TB) string { return gcsURL(t, "") }},
	{Name: "gcs-trusted-clock", MinTTL: gcs.MinTTL, ServerTimed: true, URL: func(t testing.TB) string { return gcsURL(t, "&trusted-clock=true") }},
	{Name: "s3-clock-free", MinTTL: fences3.MinTTL, URL: func(t testing.TB) string { return s3URL(t, "") }},
	{Name: "s3-trusted-clock", MinTTL: fences3.MinTTL, ServerTimed: true, URL: func(t testing.TB) string { return s3URL(t, "&trusted-clock=true") }},
	// etcd grants leases of whole seconds, 2 s at the least.
	{Name: "etcd", Keyspace: true, MinTTL: etcd.DefaultMinTTL, ServerTimed: true, URL: etcdURL},
	// Redis and Redlock take leases of 100 ms: 1 s, as on PostgreSQL.
	{Name: "redis", Keyspace: true, MinTTL: time.Second, ServerTimed: true, URL: redisURL},
	{Name: "redlock", Keyspace: true, MinTTL: time.Second, ServerTimed: true, URL: redlockURL},
	// MySQL takes leases of 100 ms: 1 s, as on PostgreSQL.
	{Name: "mysql", MinTTL: time.Second, ServerTimed: true, URL: mysqlURL},
	// SQLite takes leases of 100 ms: 1 s, as on PostgreSQL. Its file
	// lives in the test's temporary directory.
	{Name: "sqlite", MinTTL: time.Second, ServerTimed: true, File: true, URL: sqliteURL},
	// ZooKeeper takes leases of 1 s up to two thirds of the session
	// timeout: sessions of a minute (the test server grants up to two)
	// let the tests' leases of up to 40 s fit. Its lock nodes live under
	// a root of their own.
	{Name: "zookeeper", Keyspace: true, MinTTL: time.Second, ServerTimed: true, URL: zookeeperURL},
	// NATS JetStream KV: clock-free, leases of 1 s and more, a bucket of
	// one replica per test on the shared server (sync_interval: always).
	{Name: "nats", MinTTL: fencenats.MinTTL, URL: natsURL},
	// Kubernetes keeps leases in Lease objects of a fresh namespace of the
	// test's API server, in whole seconds; contenders time a Lease's
	// resourceVersion on their own clock (clock-free).
	{Name: "kubernetes", Keyspace: true, MinTTL: kubernetes.MinTTL, URL: kubernetesURL},
	// PostgreSQL through database/sql with pgx's driver (postgres.NewSQL).
	{Name: "postgres-sql", MinTTL: time.Second, ServerTimed: true, URL: postgresURL, Open: openPostgresSQL},
}

// The etcd and Redis servers outlive the test run (scripts/kvstores.sh
// starts them without persistence): a test's keys stay under its unique
// prefix, untouched by other tests, until the servers stop.

// sqliteURL names a fresh file in the test's temporary directory,
// removed with it.
func sqliteURL(t testing.TB) string {
	return "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "locks.db"))
}

func etcdURL(t testing.TB) string {
	return "etcd://" + testenv.EtcdEndpoints(t) + "/" + UniqueName("backend-") + "/"
}

func zookeeperURL(t testing.TB) string {
	return "zk://" + testenv.ZooKeeperServers(t) + "/" + UniqueName("backend-") + "?session-timeout=60s"
}

// natsURL names a fresh bucket on the shared NATS server, deleted when
// the test ends.
func natsURL(t testing.TB) string {
	t.Helper()
	base := testenv.Endpoint(t, "FENCE_NATS_URL", "nats-server (JetStream)")
	bucket := UniqueName("fence-backend-")
	t.Cleanup(func() {
		nc, err := natsgo.Connect(base)
		if err != nil {
			t.Errorf("delete bucket %s: %v", bucket, err)
			return
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Errorf("delete bucket %s: %v", bucket, err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteKeyValue(ctx, bucket); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
			t.Errorf("delete bucket %s: %v", bucket, err)
		}
	})
	return WithQuery(base, "bucket="+bucket)
}

// kubernetesURL names a fresh namespace of the test's API server,
// deleted when the test ends, through the administrator's kubeconfig,
// with the server's address in the URL (server=), where tests that
// redirect a store's address find it.
func kubernetesURL(t testing.TB) string {
	cfg := kubetest.Config(t)
	ns := kubetest.Namespace(t, cfg)
	return "kubernetes://" + ns + "?kubeconfig=" + url.QueryEscape(os.Getenv("FENCE_KUBECONFIG")) + "&server=" + url.QueryEscape(cfg.Host)
}

func redisURL(t testing.TB) string {
	return WithQuery(testenv.RedisURL(t), "prefix="+UniqueName("backend-")+":")
}

func redlockURL(t testing.TB) string {
	return "redlock://" + testenv.RedisMasters(t) + "/?prefix=" + UniqueName("backend-") + ":"
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
func ExecOnCleanup(t testing.TB, url, stmt string) {
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

// openPostgresSQL opens rawURL, a URL of postgresURL, with postgres.NewSQL
// on a *sql.DB of pgx's driver.
func openPostgresSQL(t testing.TB, rawURL string, clock fence.Clock) *fence.Locker {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	table := q.Get("table")
	q.Del("table")
	q.Del("pool_max_conns")
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatalf("open %s: %v", redact.URL(rawURL), err)
	}
	db.SetMaxOpenConns(2)
	t.Cleanup(func() { _ = db.Close() })
	l, err := postgres.NewSQL(db, &postgres.Options{Table: table, Clock: clock})
	if err != nil {
		t.Fatalf("open %s: %v", redact.URL(rawURL), err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func postgresURL(t testing.TB) string {
	t.Helper()
	base := testenv.PostgresURL(t)
	table := UniqueName("fence_backend_")
	ExecOnCleanup(t, base, "DROP TABLE IF EXISTS "+pgx.Identifier{table}.Sanitize())
	// Two connections per replica: tests open several replicas at once.
	return WithQuery(base, "table="+table+"&pool_max_conns=2")
}

// mysqlURL names a fresh lease table on the MariaDB server, dropped when
// the test ends.
func mysqlURL(t testing.TB) string {
	t.Helper()
	base := testenv.MySQLURL(t)
	table := UniqueName("fence_backend_")
	dsn := testenv.MySQLDSN(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		db, err := sql.Open("mysql", dsn)
		if err == nil {
			defer db.Close()
			_, err = db.ExecContext(ctx, "DROP TABLE IF EXISTS `"+table+"`")
		}
		if err != nil {
			t.Errorf("drop table %s: %v", table, err)
		}
	})
	return WithQuery(base, "table="+table)
}

// dynamoURL names a fresh table on dynalite; extra adds query parameters
// (starting with &).
func dynamoURL(t testing.TB, extra string) string {
	t.Helper()
	endpoint := testenv.DynamoEndpoint(t)
	client := emulators.DynamoClient(t, nil)
	table := UniqueName("fence-backend-")
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

// azblobURL names a fresh container on Azurite, found through
// AZURE_STORAGE_CONNECTION_STRING (scripts/emulators.sh sets it).
func azblobURL(t testing.TB) string {
	t.Helper()
	conn := testenv.AzuriteConnectionString(t)
	name := UniqueName("fence-backend-")
	t.Cleanup(func() { deleteContainer(t, conn, name) })
	return "azblob://" + name
}

// gcsURL names a fresh bucket on fake-gcs-server, found through
// STORAGE_EMULATOR_HOST. extra adds query parameters
// (starting with &).
func gcsURL(t testing.TB, extra string) string {
	t.Helper()
	testenv.GCSEndpoint(t)
	name := UniqueName("fence-backend-")
	t.Cleanup(func() { removeBucket(t, name) })
	return "gs://" + name + "?prefix=locks/" + extra
}

// s3URL names a fresh bucket on MinIO, with the credentials of the AWS
// SDK's environment (scripts/emulators.sh points them at MinIO). extra
// adds query parameters (starting with &).
func s3URL(t testing.TB, extra string) string {
	t.Helper()
	endpoint := testenv.S3Endpoint(t)
	testenv.S3Credentials(t)
	name := UniqueName("fence-backend-")
	t.Cleanup(func() { removeS3Bucket(t, endpoint, name) })
	return "s3://" + name + "?region=us-east-1&path-style=true&max-key-segment=255&prefix=locks/&endpoint=" + url.QueryEscape(endpoint) + extra
}

// removeS3Bucket deletes bucket name on MinIO and its objects, if it
// exists.
func removeS3Bucket(t testing.TB, endpoint, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ak, sk := testenv.S3Credentials(t)
	client := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk, Source: "test"}, nil
		}),
	})
	// MinIO lists an object "x/child" only once "x" is gone: list again
	// until nothing is left.
	for deleted := true; deleted; {
		deleted = false
		page, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(name)})
		if err != nil {
			if _, missing := errors.AsType[*s3types.NoSuchBucket](err); !missing {
				t.Errorf("remove bucket %s: %v", name, err)
			}
			return
		}
		for _, o := range page.Contents {
			if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: o.Key}); err != nil {
				t.Errorf("remove bucket %s: %v", name, err)
				return
			}
			deleted = true
		}
	}
	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Errorf("remove bucket %s: %v", name, err)
	}
}

func deleteContainer(t testing.TB, conn, name string) {
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

// newGCSClient returns a client of fake-gcs-server.
func newGCSClient(ctx context.Context, t testing.TB) (*storage.Client, error) {
	endpoint := testenv.GCSEndpoint(t)
	return storage.NewClient(ctx,
		option.WithEndpoint(strings.TrimSuffix(endpoint, "/")+"/storage/v1/"),
		option.WithoutAuthentication())
}

// removeBucket deletes bucket name and its objects, if it exists.
func removeBucket(t testing.TB, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := newGCSClient(ctx, t)
	if err != nil {
		t.Errorf("remove bucket %s: %v", name, err)
		return
	}
	defer client.Close()
	if err := gcsbucket.Remove(ctx, client.Bucket(name)); err != nil && !errors.Is(err, storage.ErrBucketNotExist) {
		t.Errorf("remove bucket %s: %v", name, err)
	}
}
