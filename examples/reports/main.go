// Command reports is fence's report-upload example, the production case the
// project started from: a queue of daily report jobs, some submitted twice,
// is worked by several workers. Each job takes the lease
// report:{customer}:{date} (60 s, tried once) and uploads the rendered CSV
// through a fenced object-store write carrying the lease's token.
//
// Every report names the write that stored it: each row carries the token of
// the lease it was rendered under and the worker (columns token and
// rendered_by). So the writes of two leases never have the same bytes,
// which S3 needs: it derives an object's ETag from its bytes alone, and a
// conditional PUT of the bytes an object already holds cannot be told apart
// from the write before it (see resources/s3, "ETags name contents"). A
// reader of the report also sees which lease wrote it.
//
// A duplicate whose key is busy skips its turn: the holder renders that
// report. A duplicate that comes after the first finished finds the report
// in the store, written under an earlier lease, and skips it too; it does not
// re-render, because a re-render could replace a report already delivered
// with different figures. The existence check is only an efficiency device:
// the fence keeps a stale render out.
//
// One worker takes its lease with a short TTL, renders, and pauses past its
// lease before uploading (as in a long garbage-collection pause). A late
// order arrives meanwhile; the queue redelivers the unacknowledged job, and
// another worker renders it with the late order and uploads it under a newer
// token. The paused worker's late upload is then rejected with
// fence.ErrStaleToken. At the end the program reads every report back,
// checks the invariants (among them: each report's body names the token the
// store recorded for it, the highest token that tried to write it) and exits
// non-zero if any fails.
//
// With no flags it needs no setup: an in-memory locker on a fake clock (the
// pause moves the clock instead of sleeping) and the in-memory fenced store.
// Flags put the reports in S3 or MinIO (-s3-bucket, resources/s3), in
// Google Cloud Storage or fake-gcs-server (-gcs-bucket, resources/gcs), or
// in Azure Blob Storage or Azurite (-azblob-container, resources/azblob),
// and the locks in PostgreSQL (-postgres) or DynamoDB (-dynamo-table).
// Buckets, containers and tables are created when missing; each run writes
// under a fresh prefix.
//
//	go run ./examples/reports
//	go run ./examples/reports -unfenced   # control: no token check; must fail
//	go run ./examples/reports -s3-bucket reports -s3-endpoint http://127.0.0.1:9000
//	STORAGE_EMULATOR_HOST=http://127.0.0.1:4443 go run ./examples/reports -gcs-bucket reports
//	go run ./examples/reports -gcs-bucket reports -postgres postgres://user@localhost/db
//	go run ./examples/reports -s3-bucket reports -dynamo-table report-locks
//	go run ./examples/reports -azblob-container reports
//
// The AWS clients take their region, keys and endpoints from the SDK's
// usual settings (AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_DYNAMODB), which the flags override;
// S3 is addressed path-style, as MinIO wants. The GCS client uses Application
// Default Credentials, or STORAGE_EMULATOR_HOST or -gcs-endpoint for an
// emulator. The Azure client takes its account, key and endpoint from
// AZURE_STORAGE_CONNECTION_STRING (for Azurite, a string with its
// BlobEndpoint).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	cfg := config{}
	flag.IntVar(&cfg.workers, "workers", 3, "number of workers")
	flag.DurationVar(&cfg.ttl, "ttl", 60*time.Second, "lease TTL of the workers")
	flag.DurationVar(&cfg.pauseTTL, "pause-ttl", time.Second, "lease TTL of the worker that pauses (DynamoDB's minimum is 1s)")
	flag.DurationVar(&cfg.renderTime, "render-time", 20*time.Millisecond, "how long rendering one report takes")
	flag.BoolVar(&cfg.unfenced, "unfenced", false, "control run: uploads without the token check (the invariants must then fail)")
	flag.StringVar(&cfg.postgres, "postgres", "", "PostgreSQL URL for the locks (default: in-memory locker)")
	flag.StringVar(&cfg.postgresTable, "postgres-table", "reports_locks", "lease table in PostgreSQL")
	flag.StringVar(&cfg.dynamoTable, "dynamo-table", "", "DynamoDB table for the locks, created when missing")
	flag.StringVar(&cfg.dynamoEndpoint, "dynamo-endpoint", "", "DynamoDB endpoint URL, e.g. dynalite's (default: AWS_ENDPOINT_URL_DYNAMODB or AWS)")
	flag.StringVar(&cfg.s3Bucket, "s3-bucket", "", "S3 bucket for the reports, created when missing (default: in-memory store)")
	flag.StringVar(&cfg.s3Endpoint, "s3-endpoint", "", "S3 endpoint URL, e.g. MinIO's (default: AWS_ENDPOINT_URL_S3 or AWS)")
	flag.StringVar(&cfg.gcsBucket, "gcs-bucket", "", "GCS bucket for the reports, created when missing (default: in-memory store)")
	flag.StringVar(&cfg.gcsEndpoint, "gcs-endpoint", "", "fake-gcs-server base URL, unauthenticated (default: STORAGE_EMULATOR_HOST or Google)")
	flag.StringVar(&cfg.gcsProject, "gcs-project", "fence-reports", "project in which a missing GCS bucket is created")
	flag.StringVar(&cfg.azblobContainer, "azblob-container", "", "Azure container for the reports, created when missing; credentials from AZURE_STORAGE_CONNECTION_STRING (default: in-memory store)")
	flag.Parse()
	cfg.azblobConnection = os.Getenv("AZURE_STORAGE_CONNECTION_STRING")
	if cfg.workers < 1 || cfg.ttl <= 0 || cfg.pauseTTL <= 0 || cfg.renderTime < 0 {
		fmt.Fprintln(os.Stderr, "reports: -workers must be at least 1, the TTLs positive and -render-time not negative")
		os.Exit(2)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reports:", err)
		os.Exit(1)
	}
	if failed := rep.print(os.Stdout); failed > 0 {
		fmt.Fprintf(os.Stdout, "\n%d invariant(s) FAILED\n", failed)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stdout, "\nall invariants hold")
}
