package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/testing/testenv"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

func play(t *testing.T, cfg config) (rep *report, failed int, out string) {
	t.Helper()
	var buf bytes.Buffer
	rep, err := run(t.Context(), cfg, &buf)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, buf.String())
	}
	failed = rep.print(&buf)
	return rep, failed, buf.String()
}

func defaults() config {
	return config{workers: 3, ttl: 60 * time.Second, pauseTTL: time.Second, renderTime: 10 * time.Millisecond,
		postgresTable: "reports_locks", gcsProject: "fence-test"}
}

// controlFailures are the invariants a run without the token check must
// break: the paused worker's stale render replaces the fresh one.
var controlFailures = []string{
	"FAIL every report is in the store, rendered from the final orders",
	"FAIL every report carries the token and content of its latest accepted upload",
	"FAIL every report's body names the write that stored it",
	"FAIL tokens of accepted uploads never decrease per report",
	"FAIL each report was uploaded once",
	"FAIL the paused worker's stale upload was rejected",
}

// expect checks a run's outcome: every invariant holds and the stale upload
// was rejected, or, for a control run, the invariants catch the stale upload.
func expect(t *testing.T, cfg config) {
	t.Helper()
	rep, failed, out := play(t, cfg)
	if !cfg.unfenced {
		if failed != 0 || !strings.Contains(out, "paused-worker: upload of acme/2025-03-14 REJECTED: fence/") && strings.Contains(out, ": stale token") {
			t.Fatalf("%d invariants failed or the stale upload was not rejected:\n%s", failed, out)
		}
		// Each stored report names, in its body, the token the store
		// recorded for it; the redelivered job's is the newer lease's.
		for _, o := range rep.objects {
			if o.stampErr != nil || o.stampToken != o.token || !strings.HasPrefix(o.stampWorker, "worker-") {
				t.Errorf("%s stored with token %d names token %d by %q (%v) in its body", o.name, o.token, o.stampToken, o.stampWorker, o.stampErr)
			}
			if strings.HasSuffix(o.name, "acme/2025-03-14.csv") && o.stampToken < 2 {
				t.Errorf("%s names token %d, want the redelivery's newer token", o.name, o.stampToken)
			}
		}
		if len(rep.objects) == 0 {
			t.Error("no report read back")
		}
		return
	}
	for _, want := range controlFailures {
		if !strings.Contains(out, want) {
			t.Errorf("control run did not report %q", want)
		}
	}
	if failed != len(controlFailures) {
		t.Fatalf("control run failed %d invariants, want %d:\n%s", failed, len(controlFailures), out)
	}
}

func TestReportsInMemory(t *testing.T) {
	t.Parallel()
	expect(t, defaults())
}

// TestReportsUnfencedFails is the control: without the token check the
// paused worker's upload is accepted and the invariants must catch it.
func TestReportsUnfencedFails(t *testing.T) {
	t.Parallel()
	cfg := defaults()
	cfg.unfenced = true
	expect(t, cfg)
}

// TestReportsObjectStores runs the example on MinIO, fake-gcs-server and
// Azurite, fenced and as the control (whose uploads are plain SDK writes).
func TestReportsObjectStores(t *testing.T) {
	t.Parallel()
	s3 := func(bucket string, unfenced bool) func(t *testing.T) config {
		return func(t *testing.T) config {
			cfg := defaults()
			cfg.s3Bucket, cfg.s3Endpoint, cfg.unfenced = bucket, testenv.S3Endpoint(t), unfenced
			cfg.awsAccessKey, cfg.awsSecretKey = testenv.S3Credentials(t)
			return cfg
		}
	}
	gcs := func(bucket string, unfenced bool) func(t *testing.T) config {
		return func(t *testing.T) config {
			cfg := defaults()
			cfg.gcsBucket, cfg.gcsEndpoint, cfg.unfenced = bucket, testenv.GCSEndpoint(t), unfenced
			return cfg
		}
	}
	azblob := func(name string, unfenced bool) func(t *testing.T) config {
		return func(t *testing.T) config {
			cfg := defaults()
			cfg.azblobContainer, cfg.azblobConnection, cfg.unfenced = name, testenv.AzuriteConnectionString(t), unfenced
			return cfg
		}
	}
	for _, tc := range []struct {
		name string
		cfg  func(t *testing.T) config
	}{
		{"Azurite", azblob("fence-reports-fenced", false)},
		{"Azurite unfenced", azblob("fence-reports-unfenced", true)},
		{"MinIO", s3("fence-reports-fenced", false)},
		{"MinIO unfenced", s3("fence-reports-unfenced", true)},
		{"fake-gcs-server", gcs("fence-reports-fenced", false)},
		{"fake-gcs-server unfenced", gcs("fence-reports-unfenced", true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			expect(t, tc.cfg(t))
		})
	}
}

// TestReportsLockers runs the example with its locks in PostgreSQL and in
// DynamoDB (dynalite). Expiry there is measured by the store or the wall
// clock, so the paused worker really waits for its short lease.
func TestReportsLockers(t *testing.T) {
	t.Parallel()
	suffix := randomID()
	for _, tc := range []struct {
		name string
		cfg  func(t *testing.T) config
	}{
		{"PostgreSQL", func(t *testing.T) config {
			cfg := defaults()
			cfg.postgres, cfg.postgresTable = testenv.PostgresURL(t), "reports_locks_"+suffix
			testlockers.ExecOnCleanup(t, cfg.postgres, "DROP TABLE IF EXISTS "+pgx.Identifier{cfg.postgresTable}.Sanitize())
			cfg.pauseTTL = 200 * time.Millisecond
			return cfg
		}},
		{"DynamoDB", func(t *testing.T) config {
			cfg := defaults()
			cfg.dynamoTable, cfg.dynamoEndpoint = "reports-locks-"+suffix, testenv.DynamoEndpoint(t)
			cfg.pauseTTL = time.Second // the DynamoDB locker's shortest lease
			return cfg
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			expect(t, tc.cfg(t))
		})
	}
}

func TestConflictingFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  func(*config)
		want string
	}{
		{"two stores", func(c *config) { c.s3Bucket, c.gcsBucket = "a", "b" }, "not both"},
		{"S3 and Azure", func(c *config) { c.s3Bucket, c.azblobContainer = "a", "b" }, "not both"},
		{"Azure without credentials", func(c *config) { c.azblobContainer = "reports" }, "AZURE_STORAGE_CONNECTION_STRING"},
		{"two lockers", func(c *config) { c.postgres, c.dynamoTable = "postgres://x", "t" }, "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := defaults()
			tc.set(&cfg)
			_, err := run(t.Context(), cfg, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestRenderStampsTheWrite: two writes of one report, by two leases, never
// have the same bytes, and the body names the token and worker of each.
func TestRenderStampsTheWrite(t *testing.T) {
	t.Parallel()
	j := jobs[0]
	ord := newOrders(jobs)
	first, again := ord.render(j, 1, "paused-worker"), ord.render(j, 2, "worker-3")
	if bytes.Equal(first, again) {
		t.Fatalf("two writes of %s render identical bytes:\n%s", j, first)
	}
	for _, tc := range []struct {
		body   []byte
		token  fence.Token
		worker string
	}{{first, 1, "paused-worker"}, {again, 2, "worker-3"}} {
		if !bytes.Contains(tc.body, []byte(","+tc.token.String()+","+tc.worker+"\n")) {
			t.Errorf("the body does not carry token %d and %s:\n%s", tc.token, tc.worker, tc.body)
		}
		tok, worker, err := stamp(tc.body)
		if err != nil || tok != tc.token || worker != tc.worker {
			t.Errorf("stamp = %d, %q, %v; want %d, %q", tok, worker, err, tc.token, tc.worker)
		}
	}
	// A body that names no write, or rows that name two, is refused.
	for _, body := range []string{
		"customer,date,order,sku,quantity,unit_cents,total_cents\nacme,2025-03-14,TOTAL,,,,0\n",
		string(first) + "acme,2025-03-14,TOTAL,,,,0,2,worker-3\n",
	} {
		if _, _, err := stamp([]byte(body)); err == nil {
			t.Errorf("stamp accepted %q", body)
		}
	}
}
