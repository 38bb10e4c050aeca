package torture

import (
	"context"
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/azblob"
	"github.com/fencekit/fence/lockers/dynamo"
	"github.com/fencekit/fence/lockers/gcs"
	"github.com/fencekit/fence/lockers/memory"
	"github.com/fencekit/fence/lockers/postgres"
)

// The locker backends.
var (
	// MemoryLocker is lockers/memory, one Locker shared by the workers.
	MemoryLocker = LockerKind{
		Name: "memory", TTL: 500 * time.Millisecond,
		Open: func(context.Context, *Stage) (NewLocker, error) {
			l := memory.New(nil)
			return func(int, fence.Clock) (fence.Locker, error) { return l, nil }, nil
		},
	}

	// PostgresLocker is lockers/postgres on a pool through the proxy.
	PostgresLocker = LockerKind{
		Name: "postgres", Env: []string{EnvPostgresURL}, TTL: time.Second,
		Open: openPostgresLocker,
	}

	// DynamoLocker is lockers/dynamo in clock-free mode, each worker with
	// a Locker (and observations) of its own, as separate processes.
	DynamoLocker = LockerKind{
		Name: "dynamo", Env: []string{EnvDynamoEndpoint}, TTL: time.Second,
		Open: func(ctx context.Context, s *Stage) (NewLocker, error) { return openDynamoLocker(ctx, s, false, 0) },
	}

	// DynamoTrustedLocker is lockers/dynamo in trusted-clock mode,
	// tolerating 200 ms of skew; the workers' clocks are off by up to
	// 400 ms.
	DynamoTrustedLocker = LockerKind{
		Name: "dynamo-trusted", Env: []string{EnvDynamoEndpoint}, TTL: 2 * time.Second, MaxSkew: 200 * time.Millisecond,
		Open: func(ctx context.Context, s *Stage) (NewLocker, error) {
			return openDynamoLocker(ctx, s, true, 200*time.Millisecond)
		},
	}

	// GCSLocker is lockers/gcs in clock-free mode.
	GCSLocker = LockerKind{
		Name: "gcs", Env: []string{EnvGCSEndpoint}, TTL: gcs.MinTTL,
		Open: func(ctx context.Context, s *Stage) (NewLocker, error) { return openGCSLocker(ctx, s, false, 0) },
	}

	// GCSTrustedLocker is lockers/gcs in trusted-clock mode, tolerating
	// 300 ms of skew; the workers' clocks are off by up to 600 ms.
	GCSTrustedLocker = LockerKind{
		Name: "gcs-trusted", Env: []string{EnvGCSEndpoint}, TTL: gcs.MinTTL, MaxSkew: 300 * time.Millisecond,
		Open: func(ctx context.Context, s *Stage) (NewLocker, error) {
			return openGCSLocker(ctx, s, true, 300*time.Millisecond)
		},
	}

	// AzblobLocker is lockers/azblob, with Azure's shortest lease (15 s).
	AzblobLocker = LockerKind{
		Name: "azblob", Env: []string{EnvAzuriteURL}, TTL: azblob.MinTTL,
		Open: openAzblobLocker,
	}
)

func openPostgresLocker(ctx context.Context, s *Stage) (NewLocker, error) {
	faulty, clean, err := s.Postgres(ctx)
	if err != nil {
		return nil, err
	}
	table := s.ID + "_locks"
	schema, err := postgres.SchemaSQL(table)
	if err != nil {
		return nil, err
	}
	setup, err := s.PgxPool(ctx, clean, 2)
	if err != nil {
		return nil, err
	}
	if _, err := setup.Exec(ctx, schema); err != nil {
		return nil, fmt.Errorf("torture: create lease table: %w", err)
	}
	pool, err := s.PgxPool(ctx, faulty, 8)
	if err != nil {
		return nil, err
	}
	return func(_ int, clock fence.Clock) (fence.Locker, error) {
		return postgres.New(pool, &postgres.Options{Table: table, Clock: clock})
	}, nil
}

func openDynamoLocker(ctx context.Context, s *Stage, trusted bool, skew time.Duration) (NewLocker, error) {
	setup, err := dynamoClient(s.CleanHTTPClient())
	if err != nil {
		return nil, err
	}
	api, err := dynamoClient(s.HTTPClient())
	if err != nil {
		return nil, err
	}
	table := s.ID + "-locks"
	if err := dynamo.CreateTable(ctx, setup, table, nil); err != nil {
		return nil, err
	}
	s.Defer(func() { deleteDynamoTable(setup, table) })
	return func(_ int, clock fence.Clock) (fence.Locker, error) {
		return dynamo.New(api, table, &dynamo.Options{Clock: clock, TrustedClock: trusted, MaxClockSkew: skew})
	}, nil
}

func openGCSLocker(ctx context.Context, s *Stage, trusted bool, skew time.Duration) (NewLocker, error) {
	bucket, err := gcsBucket(ctx, s, "locks")
	if err != nil {
		return nil, err
	}
	c, err := gcsClient(ctx, s, s.HTTPClient())
	if err != nil {
		return nil, err
	}
	return func(_ int, clock fence.Clock) (fence.Locker, error) {
		return gcs.New(c.Bucket(bucket), &gcs.Options{Clock: clock, TrustedClock: trusted, MaxClockSkew: skew, Backoff: 20 * time.Millisecond})
	}, nil
}

func openAzblobLocker(ctx context.Context, s *Stage) (NewLocker, error) {
	name := s.ID + "-locks"
	setup, err := azureContainer(name, s.CleanHTTPClient())
	if err != nil {
		return nil, err
	}
	if _, err := setup.Create(ctx, nil); err != nil {
		return nil, fmt.Errorf("torture: create container: %w", err)
	}
	s.Defer(func() {
		ctx, cancel := cleanupContext()
		defer cancel()
		_, _ = setup.Delete(ctx, nil)
	})
	c, err := azureContainer(name, s.HTTPClient())
	if err != nil {
		return nil, err
	}
	return func(_ int, clock fence.Clock) (fence.Locker, error) {
		return azblob.New(c, &azblob.Options{Clock: clock})
	}, nil
}
