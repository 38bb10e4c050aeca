package gcs

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence/internal/gcsbucket"
	"github.com/fencekit/fence/internal/testing/createtest"
	"github.com/fencekit/fence/internal/testing/testenv"
)

// TestConcurrentCreate checks that replicas starting together may all
// create the bucket: three resources opened from one gs:// URL of a fresh
// bucket, each with a client of its own, call Create at once, and each
// succeeds.
func TestConcurrentCreate(t *testing.T) {
	t.Parallel()
	endpoint := testenv.GCSEndpoint(t)
	createtest.Race(t, func(t *testing.T, n int) []createtest.Create {
		bucket := uniqueName("fence-create-")
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := gcsbucket.Remove(ctx, newClient(t, nil).Bucket(bucket)); err != nil && !errors.Is(err, storage.ErrBucketNotExist) {
				t.Errorf("remove bucket %s: %v", bucket, err)
			}
		})
		raw := "gs://" + bucket + "?endpoint=" + url.QueryEscape(endpoint)
		return createtest.OpenResources(t, raw, n)
	})
}
