package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/fencekit/fence"
)

// bucketChecked is the Cloud Storage locker with a missing bucket told
// apart from a free key: the SDK reports every 404 on an object as
// storage.ErrObjectNotExist, so the locker reads a key in a missing bucket
// as never acquired, and a write into one fails with a bare 404. Where
// such an answer could hide a missing bucket, bucketChecked asks for the
// bucket and reports storage.ErrBucketNotExist (see Missing).
type bucketChecked struct {
	fence.Locker
	bucket *storage.BucketHandle
	name   string
}

// Acquire implements fence.Locker.
func (l *bucketChecked) Acquire(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions) (fence.Lease, error) {
	lease, err := l.Locker.Acquire(ctx, key, ttl, opts)
	if ge, ok := errors.AsType[*googleapi.Error](err); ok && ge.Code == http.StatusNotFound {
		if missing := l.missing(ctx); missing != nil {
			return fence.Lease{}, missing
		}
	}
	return lease, err
}

// Break implements fence.Locker.
func (l *bucketChecked) Break(ctx context.Context, key string) error {
	if err := l.Locker.Break(ctx, key); err != nil {
		return err
	}
	return l.missing(ctx)
}

// Inspect implements fence.Locker.
func (l *bucketChecked) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	info, err := l.Locker.Inspect(ctx, key)
	if err == nil && !info.Token.Valid() {
		if missing := l.missing(ctx); missing != nil {
			return fence.LockInfo{}, missing
		}
	}
	return info, err
}

// missing returns an error matching storage.ErrBucketNotExist when the
// bucket does not exist, and nil otherwise (also when it cannot tell: the
// locker's own answer stands then).
func (l *bucketChecked) missing(ctx context.Context) error {
	if _, err := l.bucket.Attrs(ctx); errors.Is(err, storage.ErrBucketNotExist) {
		return fmt.Errorf("gs: bucket %q: %w", l.name, err)
	}
	return nil
}
