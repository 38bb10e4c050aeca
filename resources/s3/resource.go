package s3

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/fencekit/fence"
)

// Put implements fence.Resource: PutObject of value under name.
func (b *Bucket) Put(ctx context.Context, name string, token fence.Token, value []byte) error {
	_, err := b.PutObject(ctx, name, token, bytes.NewReader(value), nil)
	return err
}

// Get implements fence.Resource: GetObject of name, read whole.
func (b *Bucket) Get(ctx context.Context, name string) ([]byte, fence.Token, error) {
	obj, err := b.GetObject(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	defer obj.Body.Close()
	v, err := io.ReadAll(obj.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("fence/s3: get %q: %w", name, withCtx(ctx, err))
	}
	return v, obj.Token, nil
}

// Delete implements fence.Resource: DeleteObject of name.
func (b *Bucket) Delete(ctx context.Context, name string, token fence.Token) error {
	_, err := b.DeleteObject(ctx, name, token)
	return err
}
