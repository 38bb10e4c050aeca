package s3

import (
	"context"

	"github.com/fencekit/fence"
)

// deleteObject replaces key, if token is at least the highest token the
// object has seen, in the same conditional PUT as putObject, with a
// tombstone carrying token: getObject then reports the key as not found,
// and the high-water mark stays. Deleting a missing key still leaves a
// tombstone; deleting a tombstone with its own token writes nothing
// (PutResult.Attempts 0).
func (b *bucket) deleteObject(ctx context.Context, key string, token fence.Token) (*PutResult, error) {
	return b.write(ctx, &write{key: key, token: token, tombstone: true})
}
