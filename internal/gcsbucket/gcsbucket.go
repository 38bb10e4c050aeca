// Package gcsbucket removes Cloud Storage buckets that tests and the
// torture run made: a bucket must be empty before it can be deleted.
package gcsbucket

import (
	"context"
	"errors"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
)

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
