package gcs

import (
	"context"
	"errors"
	"fmt"
	"io"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
)

// maxOpenTries bounds how often Open starts over when the object is
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

// read returns the record of name as the store holds it now.
func (r *Resource) read(ctx context.Context, name string) (record, error) {
	attrs, err := r.bucket.Object(name).Attrs(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return record{}, nil
	}
	if err != nil {
		return record{}, fmt.Errorf("fencegcs: reading the attributes of %q: %w", name, err)
	}
	return recordOf(name, attrs)
}

// Open opens the content of name for reading, with the token of the write
// that stored it. The content is that of the very generation whose
// attributes were read. A name never written gets a *fence.NotFoundError,
// a tombstone one with Tombstone set; an object with corrupted fence
// metadata gets an error matching fence.ErrCorrupt.
func (r *Resource) Open(ctx context.Context, name string) (*Reader, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for range maxOpenTries {
		rec, err := r.read(ctx, name)
		if err != nil {
			return nil, err
		}
		if !rec.exists || rec.tombstone {
			return nil, &fence.NotFoundError{Key: name, Tombstone: rec.tombstone}
		}
		rd, err := r.bucket.Object(name).Generation(rec.generation).NewReader(ctx)
		if errors.Is(err, storage.ErrObjectNotExist) {
			continue // replaced since its attributes were read: read again
		}
		if err != nil {
			return nil, fmt.Errorf("fencegcs: opening %q: %w", name, err)
		}
		return &Reader{ReadCloser: rd, Token: rec.token, Attrs: rec.attrs}, nil
	}
	return nil, fmt.Errorf("fencegcs: opening %q: the object was replaced before each of %d reads", name, maxOpenTries)
}

// Get implements fence.Resource: it reads the whole value of name with
// Open.
func (r *Resource) Get(ctx context.Context, name string) ([]byte, fence.Token, error) {
	rd, err := r.Open(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	defer rd.Close()
	v, err := io.ReadAll(rd)
	if err != nil {
		return nil, 0, fmt.Errorf("fencegcs: reading %q: %w", name, err)
	}
	return v, rd.Token, nil
}

// Highest implements fence.Resource: the token in the metadata of the
// object or tombstone stored under name, 0 when there is none.
func (r *Resource) Highest(ctx context.Context, name string) (fence.Token, error) {
	if err := ValidateName(name); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	rec, err := r.read(ctx, name)
	if err != nil {
		return 0, err
	}
	return rec.token, nil
}
