// Package gcsbucket creates Cloud Storage buckets for lockers/gcs and
// resources/gcs, and removes those that tests and the torture run made (a
// bucket must be empty before it can be deleted).
package gcsbucket

import (
	"context"
	"errors"
	"net/http"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
)

// Create creates bucket b in project with attrs (nil: the service's
// defaults). A bucket that exists already, made before or at this moment
// by another creator (409 Conflict), is not an error and is left as it
// is, so that replicas starting together may all create it. Bucket names
// are global: a 409 also comes for a bucket of another project, whose
// objects the caller's writes are then refused. Errors are the SDK's.
func Create(ctx context.Context, b *storage.BucketHandle, project string, attrs *storage.BucketAttrs) error {
	err := b.Create(ctx, project, attrs)
	if ge, ok := errors.AsType[*googleapi.Error](err); ok && ge.Code == http.StatusConflict {
		return nil
	}
	return err
}

// Remove deletes every object of b, then b. It stops at the first error,
// which matches storage.ErrBucketNotExist when b does not exist.
func Remove(ctx context.Context, b *storage.BucketHandle) error {
	it := b.Objects(ctx, nil)
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return err
		}
		if err := b.Object(attrs.Name).Delete(ctx); err != nil {
			return err
		}
	}
	return b.Delete(ctx)
}
