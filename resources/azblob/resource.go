package azblob

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/fencekit/fence"
)

// The methods of the driver, called by the *fence.Resource with a valid
// key and token.

// Put implements driver.Resource: putBlob of value.
func (s *store) Put(ctx context.Context, key string, token fence.Token, value []byte) error {
	_, err := s.putBlob(ctx, key, token, bytes.NewReader(value), nil)
	return err
}

// Get implements driver.Resource: getBlob, read whole. A blob written
// without fencing has token 0, which the *fence.Resource reports as
// corrupt.
func (s *store) Get(ctx context.Context, key string) ([]byte, fence.Token, error) {
	b, err := s.getBlob(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	defer b.Body.Close()
	v, err := io.ReadAll(b.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the blob: %w", err)
	}
	return v, b.Token, nil
}

// Delete implements driver.Resource: it replaces key's blob, if token is
// at least the highest token the blob has seen, in the same conditional
// write as Put, with a tombstone carrying token: Get then reports the key
// as not found, and the high-water mark stays. Deleting a missing key
// still leaves a tombstone; deleting a tombstone with its own token writes
// nothing.
func (s *store) Delete(ctx context.Context, key string, token fence.Token) error {
	_, err := s.write(ctx, &write{key: key, token: token, tombstone: true})
	return err
}

// Highest implements driver.Resource: the token of the blob or tombstone
// under key, from Get Blob Properties; 0 when there is none, or when the
// blob was written without fencing.
func (s *store) Highest(ctx context.Context, key string) (fence.Token, error) {
	name, err := s.blobOf(key)
	if err != nil {
		return 0, err
	}
	st, err := s.head(ctx, key, name)
	if err != nil {
		return 0, err
	}
	return st.Token, nil
}
