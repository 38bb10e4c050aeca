package gcs

import (
	"context"
	"fmt"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/gcsbucket"
)

// CreateBucket creates bucket in the Google Cloud project projectID with
// the settings the Locker needs: object versioning off (every write would
// otherwise keep the record it replaced). A bucket that exists already is
// not an error and is left as it is (also one that another replica is
// creating at the same moment); it must not have a retention policy
// or hold objects (the Locker overwrites its objects), and its lifecycle
// rules must never delete them (that restarts a key's tokens at 1). An
// error is a *fence.OpError for the operation "create".
func CreateBucket(ctx context.Context, bucket *storage.BucketHandle, projectID string) error {
	if err := createBucket(ctx, bucket, projectID); err != nil {
		return &fence.OpError{Backend: "gcs", Op: "create", Err: err}
	}
	return nil
}

// createBucket is CreateBucket with a bare error, for the URL opener's
// Create (which the portable layer wraps).
func createBucket(ctx context.Context, bucket *storage.BucketHandle, projectID string) error {
	if err := gcsbucket.Create(ctx, bucket, projectID, &storage.BucketAttrs{VersioningEnabled: false}); err != nil {
		return fmt.Errorf("bucket %q: %w", bucket.BucketName(), err)
	}
	return nil
}
