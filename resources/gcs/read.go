package gcs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// maxOpenTries bounds how often NewReader starts over when the object is
// replaced between reading its attributes and opening its content.
const maxOpenTries = 10

// Reader is an open fenced object: its content, the token of the write that
// stored it and its attributes. Close it when done.
type Reader struct {
	io.ReadCloser
	// Token is the token of the write that stored the content.
	Token fence.Token
	// Attrs are the object's attributes, read together with Token.
	Attrs *storage.ObjectAttrs
}

// read returns the record of key as the store holds it now.
func (b *bucket) read(ctx context.Context, key string) (record, error) {
	name, err := b.objectName(key)
	if err != nil {
		return record{}, err
	}
	attrs, err := b.handle.Object(name).Attrs(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return record{}, b.absent(ctx)
	}
	if err != nil {
		return record{}, fmt.Errorf("reading the attributes: %w", err)
	}
	b.seen.Store(true)
	return recordOf(key, attrs)
}

// absent settles a missing object, which Cloud Storage reports as it does
// a missing bucket: until the bucket was seen to exist, it reads the
// bucket's attributes. It returns an error matching fence.ErrStoreMissing
// (and storage.ErrBucketNotExist) for a missing bucket, and nil otherwise:
// the bucket is there, or the caller may not read its attributes (403) or
// the read failed, and the object's answer stands.
func (b *bucket) absent(ctx context.Context) error {
	if b.seen.Load() {
		return nil
	}
	_, err := b.handle.Attrs(ctx)
	var ge *googleapi.Error
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		return driver.StoreMissing(err)
	case err == nil, errors.As(err, &ge) && ge.Code == http.StatusForbidden:
		b.seen.Store(true)
	}
	return nil
}

// NewReader opens the content of key in r for reading, with the token of
// the write that stored it. The content is that of the very generation whose
// attributes were read. A key never written gets a *fence.NotFoundError,
// a tombstone one with Tombstone set; an object with corrupted fence
// metadata gets an error matching fence.ErrCorrupt; a missing bucket,
// fence.ErrStoreMissing; a bad key, or a resource r that is not one of
// New's, fence.ErrInvalid. Errors are *fence.OpError for op "get", as
// Get's.
func NewReader(ctx context.Context, r *fence.Resource, key string) (*Reader, error) {
	b, err := native(ctx, r, key, nil)
	if err != nil {
		return nil, fail(ctx, "get", key, err)
	}
	rd, err := b.open(ctx, key)
	if err != nil {
		return nil, fail(ctx, "get", key, err)
	}
	return rd, nil
}

// open is NewReader on a valid key.
func (b *bucket) open(ctx context.Context, key string) (*Reader, error) {
	for range maxOpenTries {
		rec, err := b.read(ctx, key)
		if err != nil {
			return nil, err
		}
		if !rec.exists || rec.Tombstone {
			return nil, &fence.NotFoundError{Key: key, Tombstone: rec.Tombstone}
		}
		rd, err := b.handle.Object(rec.attrs.Name).Generation(rec.generation).NewReader(ctx)
		if errors.Is(err, storage.ErrObjectNotExist) {
			continue // replaced since its attributes were read: read again
		}
		if err != nil {
			return nil, fmt.Errorf("opening the object: %w", err)
		}
		return &Reader{ReadCloser: rd, Token: rec.Token, Attrs: rec.attrs}, nil
	}
	return nil, fmt.Errorf("the object was replaced before each of %d reads", maxOpenTries)
}

// Get implements driver.Resource: it reads the whole value of key.
func (b *bucket) Get(ctx context.Context, key string) ([]byte, fence.Token, error) {
	rd, err := b.open(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	defer rd.Close()
	v, err := io.ReadAll(rd)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the object: %w", err)
	}
	return v, rd.Token, nil
}

// Highest implements driver.Resource: the token in the metadata of
// the object or tombstone stored under key, 0 when there is none.
func (b *bucket) Highest(ctx context.Context, key string) (fence.Token, error) {
	rec, err := b.read(ctx, key)
	if err != nil {
		return 0, err
	}
	return rec.Token, nil
}
