package torture

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	resazblob "github.com/fencekit/fence/resources/azblob"
	resmemory "github.com/fencekit/fence/resources/memory"
	ress3 "github.com/fencekit/fence/resources/s3"
)

// The resource backends.
var (
	// MemoryResource is resources/memory: mem://NAME is one Resource,
	// which the workers and the read-back share. Its control run uses its
	// Unfenced option.
	MemoryResource = ResourceKind{
		Name: "memory",
		URL:  named("mem", "values"),
		Unfenced: func(context.Context, *Stage, string, string) (resource, resource, error) {
			r := resmemory.New(&resmemory.Options{Unfenced: true})
			return r, r, nil
		},
	}

	// SQLPostgresResource is resources/sql on PostgreSQL through pgx, the
	// workers' pool going through the proxy.
	SQLPostgresResource = ResourceKind{
		Name: "sql-postgres", Env: []string{EnvPostgresURL},
		URL: postgresURL(8, 4, sqlTables),
	}

	// SQLiteResource is resources/sql on an SQLite file of the run.
	SQLiteResource = ResourceKind{
		Name: "sql-sqlite",
		URL:  sqliteFile(sqlTables),
	}

	// DynamoResource is resources/dynamo.
	DynamoResource = ResourceKind{
		Name: "dynamo", Env: dynamoEnv,
		URL: dynamoURL("values"),
	}

	// S3Resource is resources/s3 on MinIO; its control run uses its
	// Unfenced option.
	S3Resource = ResourceKind{
		Name: "s3", Env: s3Env,
		URL:      s3URL("values"),
		Unfenced: openS3Unfenced,
	}

	// AzblobResource is resources/azblob on Azurite; its control run
	// uses its Unfenced option.
	AzblobResource = ResourceKind{
		Name: "azblob", Env: azblobEnv,
		URL:      azblobURL("values"),
		Unfenced: openAzblobUnfenced,
	}

	// GCSResource is resources/gcs on fake-gcs-server.
	GCSResource = ResourceKind{
		Name: "gcs", Env: gcsResourceEnv,
		URL: gcsResourceURL("values"),
	}
)

// sqlTables returns the URL parameters of resources/sql naming the run's
// tables.
func sqlTables(s *Stage) []string {
	return []string{"fence-table", s.ID + "_fence", "value-table", s.ID + "_values"}
}

// sqliteFile returns the URL of the run's SQLite file, with the
// parameters params gives for the stage (as name, value pairs). The
// SQLite locker and resource share the file, each with tables of its own.
func sqliteFile(params func(s *Stage) []string) URLs {
	return oneURL(func(s *Stage) (string, error) {
		u := url.URL{Scheme: "sqlite", Path: filepath.Join(s.Dir, "fence.db"), RawQuery: withParams(nil, params(s)...).Encode()}
		return u.String(), nil
	})
}

// openS3Unfenced opens the bucket of clean (an s3URL) with
// resources/s3's Unfenced option, through the stage's faults and without.
func openS3Unfenced(ctx context.Context, s *Stage, _, clean string) (work, check resource, err error) {
	bucket, q, err := parseStoreURL(clean)
	if err != nil {
		return nil, nil, err
	}
	opts := &ress3.Options{MaxKeySegmentLen: minioKeySegment, Unfenced: true}
	var rs [2]resource
	for i, hc := range [2]*http.Client{s.HTTPClient(), s.CleanHTTPClient()} {
		c, err := s3Client(ctx, q, hc)
		if err != nil {
			return nil, nil, err
		}
		if rs[i], err = ress3.New(c, bucket, opts); err != nil {
			return nil, nil, err
		}
	}
	return rs[0], rs[1], nil
}

// openAzblobUnfenced opens the container of clean (an azblobURL) with
// resources/azblob's Unfenced option, through the stage's faults and
// without: the URL opener makes the container client, which As hands
// over.
func openAzblobUnfenced(ctx context.Context, s *Stage, _, clean string) (work, check resource, err error) {
	var rs [2]resource
	for i, hc := range [2]*http.Client{s.HTTPClient(), s.CleanHTTPClient()} {
		r, err := fence.OpenResource(ctx, clean, &fence.OpenOptions{HTTPClient: hc})
		if err != nil {
			return nil, nil, err
		}
		var c *container.Client
		if !r.As(&c) {
			return nil, nil, fmt.Errorf("torture: %s gives no container client", clean)
		}
		if rs[i], err = resazblob.New(c, &resazblob.Options{Unfenced: true}); err != nil {
			return nil, nil, err
		}
	}
	return rs[0], rs[1], nil
}
