package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/lockers/dynamo"
	"github.com/fencekit/fence/lockers/memory"
	"github.com/fencekit/fence/lockers/postgres"
)

// env is where the demo keeps its locks and its reports.
type env struct {
	lockName, storeName string
	locker              *fence.Locker
	store               objectStore
	// expire returns once lease has expired on the locker's clock: the
	// in-memory locker's fake clock is moved past it, a real store is
	// waited for (with a margin for the store measuring from a later
	// instant than the lease's send time).
	expire  func(ctx context.Context, lease fence.Lease) error
	closers []func()
}

func (e *env) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
}

// expiryMargin is how long after a lease's local ValidUntil the demo
// treats it as expired in a real store.
const expiryMargin = 250 * time.Millisecond

// openEnv opens the locker and the store cfg names; the in-memory ones by
// default.
func openEnv(ctx context.Context, cfg config) (*env, error) {
	e := &env{}
	err := openLocker(ctx, cfg, e)
	if err == nil {
		err = openStore(ctx, cfg, e)
	}
	if err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func openLocker(ctx context.Context, cfg config, e *env) error {
	sleepPast := func(ctx context.Context, lease fence.Lease) error {
		select {
		case <-time.After(time.Until(lease.ValidUntil) + expiryMargin):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	switch {
	case cfg.postgres != "" && cfg.dynamoTable != "":
		return errors.New("give -postgres or -dynamo-table, not both")
	case cfg.postgres != "":
		pool, err := pgxpool.New(ctx, cfg.postgres)
		if err != nil {
			return fmt.Errorf("connect to PostgreSQL: %w", err)
		}
		e.closers = append(e.closers, pool.Close)
		l, err := postgres.New(pool, &postgres.Options{Table: cfg.postgresTable})
		if err == nil {
			err = l.Create(ctx)
		}
		if err != nil {
			return err
		}
		e.locker, e.lockName, e.expire = l, "PostgreSQL locker (table "+cfg.postgresTable+")", sleepPast
	case cfg.dynamoTable != "":
		awsCfg, err := awsConfig(ctx, cfg)
		if err != nil {
			return err
		}
		client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
			if cfg.dynamoEndpoint != "" {
				o.BaseEndpoint = aws.String(cfg.dynamoEndpoint)
			}
		})
		if err := dynamo.CreateTable(ctx, client, cfg.dynamoTable, nil); err != nil {
			return err
		}
		// One process, one clock: trusted-clock expiry lets the redelivered
		// job take the key over as soon as the lease has expired. The
		// default clock-free mode would take it over only after watching it
		// unchanged for a full lease; the fence works the same in both.
		l, err := dynamo.New(client, cfg.dynamoTable, &dynamo.Options{TrustedClock: true})
		if err != nil {
			return err
		}
		e.locker, e.lockName, e.expire = l, "DynamoDB locker (table "+cfg.dynamoTable+")", sleepPast
	default:
		// The in-memory locker runs on a fake clock: the pause moves it
		// past the lease instead of sleeping.
		clock := clocktest.New(time.Now())
		e.locker, e.lockName = memory.New(&memory.Options{Clock: clock}), "in-memory locker (fake clock)"
		e.expire = func(_ context.Context, lease fence.Lease) error {
			clock.Advance(lease.ValidUntil.Sub(clock.Now()) + time.Millisecond)
			return nil
		}
	}
	return nil
}

func openStore(ctx context.Context, cfg config, e *env) error {
	n := 0
	for _, b := range []string{cfg.s3Bucket, cfg.gcsBucket, cfg.azblobContainer} {
		if b != "" {
			n++
		}
	}
	switch {
	case n > 1:
		return errors.New("give one of -s3-bucket, -gcs-bucket and -azblob-container, not both or all")
	case cfg.azblobContainer != "":
		if cfg.azblobConnection == "" {
			return errors.New("-azblob-container needs AZURE_STORAGE_CONNECTION_STRING")
		}
		client, err := container.NewClientFromConnectionString(cfg.azblobConnection, cfg.azblobContainer, nil)
		if err != nil {
			// The SDK's message can quote the connection string.
			return errors.New("AZURE_STORAGE_CONNECTION_STRING is not a usable connection string")
		}
		st, err := newAzblobStore(ctx, client, cfg.unfenced)
		if err != nil {
			return err
		}
		e.store, e.storeName = st, "Azure container "+cfg.azblobContainer
	case cfg.s3Bucket != "":
		awsCfg, err := awsConfig(ctx, cfg)
		if err != nil {
			return err
		}
		client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
			if cfg.s3Endpoint != "" {
				o.BaseEndpoint = aws.String(cfg.s3Endpoint)
			}
			o.UsePathStyle = true // MinIO and most S3-compatible servers
		})
		st, err := newS3Store(ctx, client, cfg.s3Bucket, cfg.unfenced)
		if err != nil {
			return err
		}
		e.store, e.storeName = st, "S3 bucket "+cfg.s3Bucket
	case cfg.gcsBucket != "":
		opts := []option.ClientOption{storage.WithJSONReads()}
		if cfg.gcsEndpoint != "" {
			opts = append(opts, option.WithEndpoint(cfg.gcsEndpoint+"/storage/v1/"), option.WithoutAuthentication())
		}
		client, err := storage.NewClient(ctx, opts...)
		if err != nil {
			return err
		}
		e.closers = append(e.closers, func() { _ = client.Close() })
		st, err := newGCSStore(ctx, client, cfg.gcsBucket, cfg.gcsProject, cfg.unfenced)
		if err != nil {
			return err
		}
		e.store, e.storeName = st, "GCS bucket "+cfg.gcsBucket
	default:
		e.store, e.storeName = newMemoryStore(cfg.unfenced), "in-memory object store"
	}
	return nil
}

// awsConfig loads the SDK's defaults (AWS_* variables, profiles) and puts
// the keys of cfg over them when given.
func awsConfig(ctx context.Context, cfg config) (aws.Config, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if cfg.awsAccessKey != "" {
		ak, sk := cfg.awsAccessKey, cfg.awsSecretKey
		opts = append(opts, awsconfig.WithCredentialsProvider(aws.CredentialsProviderFunc(
			func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk, Source: "reports flags"}, nil
			})))
	}
	c, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	return c, nil
}
