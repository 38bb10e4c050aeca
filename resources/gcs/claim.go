package gcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
	"github.com/fencekit/fence/internal/fencedobj"
)

// Claim implements driver.Resource: it raises the token of key's
// object to token and keeps its content, headers and custom metadata. It
// reads the record and, if token is at least its token, reads the content
// of that very generation (as stored, not decompressed) and uploads it
// again with the new token and a new write id, on ifGenerationMatch of
// that generation: every upload makes a new generation, so a writer that
// read the record before the claim fails its precondition after it. A
// tombstone is replaced by a tombstone carrying token, and a key without
// an object gets one, on ifGenerationMatch=0. A failed precondition or a
// lost answer reads again; a record at token is the claim (or the token's
// holder's write). The content passes through memory.
func (b *bucket) Claim(ctx context.Context, key string, token fence.Token) error {
	name, err := b.objectName(key)
	if err != nil {
		return err
	}
	var last error
	maybe := false
	for attempt := 1; ; attempt++ {
		rec, err := b.read(ctx, key)
		if err != nil {
			return err
		}
		switch {
		case rec.exists && rec.Token == token:
			return nil // claimed already
		case token < rec.Token && maybe:
			return &fence.UnknownOutcomeError{Key: key, Token: token, Highest: rec.Token, Err: last}
		case token < rec.Token:
			return &fence.StaleTokenError{Key: key, Token: token, Highest: rec.Token}
		}
		if last != nil && b.opts.MaxAttempts > 0 && attempt > b.opts.MaxAttempts {
			return fmt.Errorf("gave up after %d attempts: %w", b.opts.MaxAttempts, last)
		}
		req, err := b.claimReq(ctx, key, name, token, rec)
		if errors.Is(err, storage.ErrObjectNotExist) {
			continue // replaced since its record was read
		}
		if err != nil {
			return err
		}
		if _, err = b.attempt(ctx, req, rec); err == nil {
			b.seen.Store(true)
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("upload: %w", err)
		}
		o := classify(err)
		if o == permanent {
			if isNotFound(err) {
				return driver.StoreMissing(fmt.Errorf("upload: %w: %w", storage.ErrBucketNotExist, err))
			}
			return fmt.Errorf("upload: %w", err)
		}
		last = err
		maybe = maybe || o == ambiguous || (o == throttled && !isTooMany(err))
		if err := backoff.Sleep(ctx, b.pause(o, attempt)); err != nil {
			return fmt.Errorf("backing off after %v: %w", last, err)
		}
	}
}

// claimReq returns the write that claims rec's object with token: a
// tombstone for a tombstone or no object, else the content of rec's
// generation with its headers and custom metadata.
func (b *bucket) claimReq(ctx context.Context, key, name string, token fence.Token, rec record) (*writeReq, error) {
	req := &writeReq{key: key, name: name, token: token, writeID: fencedobj.NewWriteID()}
	if !rec.exists || rec.Tombstone {
		req.tombstone = true
		req.body, _ = newBody(bytes.NewReader(nil)) // seeking a bytes.Reader cannot fail
		return req, nil
	}
	obj := b.handle.Object(name).Generation(rec.generation)
	if rec.attrs.ContentEncoding != "" {
		obj = obj.ReadCompressed(true) // the bytes as stored, to store again
	}
	rd, err := obj.NewReader(ctx)
	if err != nil {
		if errors.Is(err, storage.ErrObjectNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("opening the object: %w", err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("reading the object: %w", err)
	}
	a := rec.attrs
	user := make(map[string]string, len(a.Metadata))
	for k, v := range a.Metadata {
		if !strings.HasPrefix(strings.ToLower(k), MetaPrefix) {
			user[k] = v
		}
	}
	req.body, _ = newBody(bytes.NewReader(data)) // seeking a bytes.Reader cannot fail
	req.opts = &UploadOptions{
		ContentType: a.ContentType, CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition,
		ContentEncoding: a.ContentEncoding, ContentLanguage: a.ContentLanguage, Metadata: user,
	}
	return req, nil
}
