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
// with its own token writes nothing. A lower token gets a
// *fence.StaleTokenError; corrupt fence metadata, an error matching
// fence.ErrCorrupt; bad input, fence.ErrInvalid.
func (b *Bucket) DeleteObject(ctx context.Context, key string, token fence.Token) (*PutResult, error) {
	if err := b.checkKey(key); err != nil {
		return nil, err
	}
	if err := fence.ValidateToken(token); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxErr(ctx)
	}
	return b.write(ctx, &write{key: key, token: token, tombstone: true})
}

// Highest returns the highest token accepted for key, by a write or a
// delete; 0 when the key was never written with a token. It implements
// fence.Resource.
func (b *Bucket) Highest(ctx context.Context, key string) (fence.Token, error) {
	if err := b.checkKey(key); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, ctxErr(ctx)
	}
	st, err := b.head(ctx, key)
	if err != nil {
		return 0, err
	}
	return st.token, nil
}
