package torture

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/fencekit/fence"
	resdynamo "github.com/fencekit/fence/resources/dynamo"
	resgcs "github.com/fencekit/fence/resources/gcs"
	resmemory "github.com/fencekit/fence/resources/memory"
	ress3 "github.com/fencekit/fence/resources/s3"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// The resource backends.
var (
	// MemoryResource is resources/memory; its control run uses its
	// Unfenced option.
	MemoryResource = ResourceKind{
		Name: "memory",
		Open: func(_ context.Context, _ *Stage, fenced bool) (fence.Resource, fence.Resource, error) {
			r := resmemory.New(&resmemory.Options{Unfenced: !fenced})
			return r, r, nil
		},
	}

	// SQLPostgresResource is the Store of resources/sql on PostgreSQL
	// through pgx, the workers' pool going through the proxy.
	SQLPostgresResource = ResourceKind{
		Name: "sql-postgres", Env: []string{EnvPostgresURL},
		Open: openSQLPostgres,
	}

	// SQLiteResource is the Store of resources/sql on an SQLite file.
	SQLiteResource = ResourceKind{
		Name: "sql-sqlite",
		Open: openSQLite,
	}

	// DynamoResource is the Resource of resources/dynamo.
	DynamoResource = ResourceKind{
		Name: "dynamo", Env: []string{EnvDynamoEndpoint},
		Open: openDynamoResource,
	}

	// S3Resource is the Bucket of resources/s3 on MinIO; its control run
	// uses its Unfenced option.
	S3Resource = ResourceKind{
		Name: "s3", Env: []string{EnvS3Endpoint},
		Open: openS3Resource,
	}

	// GCSResource is the Resource of resources/gcs on fake-gcs-server.
	GCSResource = ResourceKind{
		Name: "gcs", Env: []string{EnvGCSEndpoint},
		Open: openGCSResource,
	}
)

// control returns r, or r without its token check for a control run.
func control(r fence.Resource, fenced bool) fence.Resource {
	if fenced {
		return r
	}
	return Unfenced{r}
}

func sqlTables(s *Stage) fencesql.Tables {
	return fencesql.Tables{Fence: s.ID + "_fence", Value: s.ID + "_values"}
}

func openSQLPostgres(ctx context.Context, s *Stage, fenced bool) (fence.Resource, fence.Resource, error) {
	faulty, clean, err := s.Postgres(ctx)
	if err != nil {
		return nil, nil, err
	}
	cleanPool, err := s.PgxPool(ctx, clean, 4)
	if err != nil {
		return nil, nil, err
	}
	t := sqlTables(s)
	if err := fencesql.CreateTablesPgx(ctx, cleanPool, t); err != nil {
		return nil, nil, err
	}
	pool, err := s.PgxPool(ctx, faulty, 8)
	if err != nil {
		return nil, nil, err
	}
	work, err := fencesql.NewPgxStore(pool, t)
	if err != nil {
		return nil, nil, err
	}
	check, err := fencesql.NewPgxStore(cleanPool, t)
	if err != nil {
		return nil, nil, err
	}
	return control(work, fenced), control(check, fenced), nil
}

func openSQLite(ctx context.Context, s *Stage, fenced bool) (fence.Resource, fence.Resource, error) {
	dsn := "file:" + filepath.Join(s.Dir, "fence.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, err
	}
	s.Defer(func() { _ = db.Close() })
	t := sqlTables(s)
	if err := fencesql.CreateTables(ctx, db, fencesql.SQLite, t); err != nil {
		return nil, nil, err
	}
	st, err := fencesql.NewStore(db, t)
	if err != nil {
		return nil, nil, err
	}
	c := control(st, fenced)
	return c, c, nil
}

func openDynamoResource(ctx context.Context, s *Stage, fenced bool) (fence.Resource, fence.Resource, error) {
	setup, err := dynamoClient(s.CleanHTTPClient())
	if err != nil {
		return nil, nil, err
	}
	api, err := dynamoClient(s.HTTPClient())
	if err != nil {
		return nil, nil, err
	}
	table := s.ID + "-values"
	if err := resdynamo.CreateTable(ctx, setup, table, nil); err != nil {
		return nil, nil, err
	}
	s.Defer(func() { deleteDynamoTable(setup, table) })
	work, err := resdynamo.NewResource(api, table, nil)
	if err != nil {
		return nil, nil, err
	}
	check, err := resdynamo.NewResource(setup, table, nil)
	if err != nil {
		return nil, nil, err
	}
	return control(work, fenced), control(check, fenced), nil
}

func deleteDynamoTable(c *dynamodb.Client, table string) {
	ctx, cancel := cleanupContext()
	defer cancel()
	_, _ = c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
}

func openS3Resource(ctx context.Context, s *Stage, fenced bool) (fence.Resource, fence.Resource, error) {
	setup, err := s3Client(s.CleanHTTPClient())
	if err != nil {
		return nil, nil, err
	}
	api, err := s3Client(s.HTTPClient())
	if err != nil {
		return nil, nil, err
	}
	bucket := s.ID + "-values"
	if _, err := setup.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return nil, nil, fmt.Errorf("torture: create bucket: %w", err)
	}
	s.Defer(func() { deleteS3Bucket(setup, bucket) })
	opts := &ress3.Options{MaxKeySegmentLen: 255, Unfenced: !fenced}
	work, err := ress3.New(api, bucket, opts)
	if err != nil {
		return nil, nil, err
	}
	check, err := ress3.New(setup, bucket, opts)
	if err != nil {
		return nil, nil, err
	}
	return work, check, nil
}

func deleteS3Bucket(c *s3.Client, bucket string) {
	ctx, cancel := cleanupContext()
	defer cancel()
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err == nil {
		for _, o := range out.Contents {
			_, _ = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key})
		}
	}
	_, _ = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
}

func openGCSResource(ctx context.Context, s *Stage, fenced bool) (fence.Resource, fence.Resource, error) {
	bucket, err := gcsBucket(ctx, s, "values")
	if err != nil {
		return nil, nil, err
	}
	c, err := gcsClient(ctx, s, s.HTTPClient())
	if err != nil {
		return nil, nil, err
	}
	cc, err := gcsClient(ctx, s, s.CleanHTTPClient())
	if err != nil {
		return nil, nil, err
	}
	work, err := resgcs.New(c.Bucket(bucket), nil)
	if err != nil {
		return nil, nil, err
	}
	check, err := resgcs.New(cc.Bucket(bucket), nil)
	if err != nil {
		return nil, nil, err
	}
	return control(work, fenced), control(check, fenced), nil
}
