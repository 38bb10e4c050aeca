package s3

import (
	"context"

	"github.com/fencekit/fence"
)

// DeleteObject deletes key if token is at least the highest token the
// object has seen, by replacing it, in the same conditional PUT as
// PutObject, with a tombstone carrying token: GetObject then reports the
// key as not found, and the high-water mark stays. Deleting a missing key
// is not an error and still leaves a tombstone; deleting a tombstone
// with its own token writes nothing (PutResult.Attempts 0). A lower token
// gets a *fence.StaleTokenError; corrupt fence metadata, an error matching
// fence.ErrCorrupt; bad input, fence.ErrInvalid. Errors are
// *fence.OpError for op "delete", as Delete's.
func (r *Resource) DeleteObject(ctx context.Context, key string, token fence.Token) (*PutResult, error) {
	if err := r.native(ctx, key, token, true); err != nil {
		return nil, fail(ctx, "delete", key, err)
	}
	res, err := r.b.deleteObject(ctx, key, token)
	if err != nil {
		return nil, fail(ctx, "delete", key, err)
	}
	return res, nil
}

func (b *bucket) deleteObject(ctx context.Context, key string, token fence.Token) (*PutResult, error) {
	return b.write(ctx, &write{key: key, token: token, tombstone: true})
}
