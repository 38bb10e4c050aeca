package storeurl

import (
	"context"
	"fmt"
	"os"
	"strings"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/api/option"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/azblob"
	"github.com/fencekit/fence/lockers/dynamo"
	"github.com/fencekit/fence/lockers/gcs"
	"github.com/fencekit/fence/lockers/postgres"
)

// Environment variables read for Azure credentials.
const (
	EnvAzureConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	EnvAzureAccount          = "AZURE_STORAGE_ACCOUNT"
	EnvAzureKey              = "AZURE_STORAGE_KEY"
	EnvAzureSASToken         = "AZURE_STORAGE_SAS_TOKEN"
	// EnvGoogleProject names the project in which `fence init` creates a
	// bucket when the URL has no project parameter.
	EnvGoogleProject = "GOOGLE_CLOUD_PROJECT"
)

// Store is an opened store: its locker, and how to create the table,
// container or bucket the locker needs.
type Store struct {
	Locker fence.Locker
	// Create creates what the locker keeps its records in, if missing.
	Create func(ctx context.Context) error
	// Close releases the clients' resources.
	Close func()
}

// Open builds the locker of s with credentials from the environment. It
// does not contact the store; the first call does.
func Open(ctx context.Context, s *Spec) (*Store, error) {
	switch s.Kind {
	case Postgres:
		return openPostgres(ctx, s)
	case DynamoDB:
		return openDynamo(ctx, s)
	case AzureBlob:
		return openAzblob(s)
	case GCS:
		return openGCS(ctx, s)
	}
	return nil, invalid("unknown store kind %q", s.Kind)
}

func openPostgres(ctx context.Context, s *Spec) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(s.ConnString)
	if err != nil {
		// pgx quotes the connection string in some parse errors.
		return nil, invalid("%s: %s", s.Redacted, Scrub(err.Error(), s.Password))
	}
	cfg.MaxConns = 2 // one call in flight, plus a re-read after an ambiguous one
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s", Scrub(err.Error(), s.Password))
	}
	l, err := postgres.New(pool, &postgres.Options{Table: s.Table})
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{Locker: l, Create: l.CreateTable, Close: pool.Close}, nil
}

func openDynamo(ctx context.Context, s *Spec) (*Store, error) {
	var opts []func(*config.LoadOptions) error
	if s.Region != "" {
		opts = append(opts, config.WithRegion(s.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("dynamodb: AWS configuration: %w", err)
	}
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if s.Endpoint != "" {
			o.BaseEndpoint = &s.Endpoint
		}
	})
	l, err := dynamo.New(client, s.Table, &dynamo.Options{
		KeyAttribute: s.KeyAttribute,
		TrustedClock: s.TrustedClock,
		MaxClockSkew: s.MaxClockSkew,
	})
	if err != nil {
		return nil, err
	}
	create := func(ctx context.Context) error {
		return dynamo.CreateTable(ctx, client, s.Table, &dynamo.TableOptions{KeyAttribute: s.KeyAttribute})
	}
	return &Store{Locker: l, Create: create, Close: func() {}}, nil
}

func openAzblob(s *Spec) (*Store, error) {
	c, err := azureContainer(s)
	if err != nil {
		return nil, err
	}
	l, err := azblob.New(c, nil)
	if err != nil {
		return nil, err
	}
	return &Store{Locker: l, Create: l.CreateContainer, Close: func() {}}, nil
}

// azureContainer builds the container client from the environment: a
// connection string, or an account with a shared key or a SAS token.
func azureContainer(s *Spec) (*container.Client, error) {
	conn := os.Getenv(EnvAzureConnectionString)
	if conn != "" && s.Endpoint == "" && s.Account == "" {
		c, err := container.NewClientFromConnectionString(conn, s.Container, nil)
		if err != nil {
			// The SDK's message can quote the connection string.
			return nil, fmt.Errorf("azblob: %s is not a usable connection string", EnvAzureConnectionString)
		}
		return c, nil
	}
	account := s.Account
	if account == "" {
		account = os.Getenv(EnvAzureAccount)
	}
	if account == "" {
		return nil, &fence.InvalidError{Field: "Azure credentials", Reason: fmt.Sprintf("none for %s: set %s, or %s (or ?account=) with %s or %s",
			s.Redacted, EnvAzureConnectionString, EnvAzureAccount, EnvAzureKey, EnvAzureSASToken)}
	}
	base := s.Endpoint
	if base == "" {
		base = "https://" + account + ".blob.core.windows.net"
	}
	u := base + "/" + s.Container
	if key := os.Getenv(EnvAzureKey); key != "" {
		cred, err := container.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, fmt.Errorf("azblob: %s is not a usable account key", EnvAzureKey)
		}
		return container.NewClientWithSharedKeyCredential(u, cred, nil)
	}
	if sas := strings.TrimPrefix(os.Getenv(EnvAzureSASToken), "?"); sas != "" {
		return container.NewClientWithNoCredential(u+"?"+sas, nil)
	}
	return nil, &fence.InvalidError{Field: "Azure credentials", Reason: fmt.Sprintf("none for account %q: set %s or %s", account, EnvAzureKey, EnvAzureSASToken)}
}

func openGCS(ctx context.Context, s *Spec) (*Store, error) {
	var opts []option.ClientOption
	if s.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(s.Endpoint+"/storage/v1/"))
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gs: Cloud Storage client: %w", err)
	}
	bucket := client.Bucket(s.Bucket)
	l, err := gcs.New(bucket, &gcs.Options{
		Prefix:       s.Prefix,
		TrustedClock: s.TrustedClock,
		MaxClockSkew: s.MaxClockSkew,
	})
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	create := func(ctx context.Context) error {
		project := s.Project
		if project == "" {
			project = os.Getenv(EnvGoogleProject)
		}
		if project == "" && os.Getenv("STORAGE_EMULATOR_HOST") == "" && s.Endpoint == "" {
			return invalid("%s: creating a bucket needs a project: add ?project=ID or set %s", s.Redacted, EnvGoogleProject)
		}
		if project == "" {
			project = "emulator"
		}
		return gcs.CreateBucket(ctx, bucket, project)
	}
	return &Store{Locker: l, Create: create, Close: func() { _ = client.Close() }}, nil
}
