package s3

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/fencekit/fence"
)

// The methods of the driver, called by the *fence.Resource with a valid
// key and token.

// Put implements driver.Resource: putObject of value.
func (b *bucket) Put(ctx context.Context, key string, token fence.Token, value []byte) error {
	_, err := b.putObject(ctx, key, token, bytes.NewReader(value), nil)
	return err
}

// Get implements driver.Resource: getObject, read whole. An object
// written without fencing has token 0, which the *fence.Resource reports
// as corrupt.
func (b *bucket) Get(ctx context.Context, key string) ([]byte, fence.Token, error) {
	obj, err := b.getObject(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	defer obj.Body.Close()
	v, err := io.ReadAll(obj.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the object: %w", err)
	}
	return v, obj.Token, nil
}

// Delete implements driver.Resource: deleteObject.
func (b *bucket) Delete(ctx context.Context, key string, token fence.Token) error {
	_, err := b.deleteObject(ctx, key, token)
	return err
}

// Highest implements driver.Resource: the token of the object or
// tombstone under key, from HeadObject; 0 when there is none, or when the
// object was written without fencing.
func (b *bucket) Highest(ctx context.Context, key string) (fence.Token, error) {
	st, err := b.head(ctx, key)
	if err != nil {
		return 0, err
	}
	return st.Token, nil
}
