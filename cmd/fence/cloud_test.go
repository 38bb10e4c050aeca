package main

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"google.golang.org/api/iterator"

	"github.com/fencekit/fence/internal/testenv"
)

func init() {
	backends = append(backends,
		// Azure leases last 15 to 60 whole seconds; a break is noticed at
		// the next renewal, within TTL/3.
		backend{name: "azblob", ttl: "15s", store: azblobStore},
		// Cloud Storage allows about one write per second per object, so
		// the locker's shortest lease is 3s.
		backend{name: "gcs", ttl: "3s", store: gcsStore},
	)
}

// azblobStore returns a store URL naming a container of the test's own on
// Azurite, created with fence init and deleted when the test ends. The
// binary finds Azurite through AZURE_STORAGE_CONNECTION_STRING (see
// TestMain).
func azblobStore(t *testing.T) string {
	t.Helper()
	conn := testenv.AzuriteConnectionString(t)
	name := uniqueName("fence-cli-")
	store := "azblob://" + name
	wantCode(t, fenceRun(t, nil, "init", "--store", store), 0)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := container.NewClientFromConnectionString(conn, name, nil)
		if err == nil {
			_, err = c.Delete(ctx, nil)
		}
		if err != nil {
			t.Errorf("delete container %s: %v", name, err)
		}
	})
	return store
}

// gcsStore returns a store URL naming a bucket of the test's own on
// fake-gcs-server, created with fence init and removed when the test ends.
// The binary finds the emulator through STORAGE_EMULATOR_HOST, as the SDK
// does.
func gcsStore(t *testing.T) string {
	t.Helper()
	testenv.GCSEndpoint(t)
	if os.Getenv("STORAGE_EMULATOR_HOST") == "" {
		t.Fatal("STORAGE_EMULATOR_HOST is unset; scripts/emulators.sh exports it with FENCE_GCS_ENDPOINT")
	}
	name := uniqueName("fence-cli-")
	store := "gs://" + name + "?prefix=locks/"
	wantCode(t, fenceRun(t, nil, "init", "--store", store), 0)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		client, err := storage.NewClient(ctx)
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
			if err != nil {
				t.Errorf("list bucket %s: %v", name, err)
				return
			}
			_ = b.Object(attrs.Name).Delete(ctx)
		}
		if err := b.Delete(ctx); err != nil {
			t.Errorf("delete bucket %s: %v", name, err)
		}
	})
	return store
}
