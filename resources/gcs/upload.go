package gcs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
	"github.com/fencekit/fence/internal/fencedobj"
)

// maxWriteIDLen is the longest UploadOptions.WriteID accepted.
const maxWriteIDLen = 128

// UploadOptions are the optional settings of Upload.
type UploadOptions struct {
	// ContentType of the object. Default: detected by the SDK from the
	// first 512 bytes of the body.
	ContentType string
	// CacheControl, ContentDisposition, ContentEncoding and
	// ContentLanguage set the object's headers of those names. Default:
	// none.
	CacheControl, ContentDisposition, ContentEncoding, ContentLanguage string
	// Metadata is the object's custom metadata. Keys starting with
	// MetaPrefix (in any case) are reserved and get an error matching
	// fence.ErrInvalid. Default: none.
	Metadata map[string]string
	// WriteID identifies this write in the object's metadata (MetaWriteID):
	// 1 to 128 printable ASCII characters. When the object already carries
	// this write id with the same token, Upload returns its attributes
	// without writing: pass the same id when retrying an Upload whose
	// outcome was ambiguous. Default: a fresh random id.
	WriteID string
}

// validate checks the options and returns the write id to use.
func (o *UploadOptions) validate() (string, error) {
	if o == nil {
		return fencedobj.NewWriteID(), nil
	}
	for k := range o.Metadata {
		if strings.HasPrefix(strings.ToLower(k), MetaPrefix) {
			return "", &fence.InvalidError{Field: "metadata", Reason: fmt.Sprintf("key %q starts with the reserved prefix %q", k, MetaPrefix)}
		}
	}
	if o.WriteID == "" {
		return fencedobj.NewWriteID(), nil
	}
	if len(o.WriteID) > maxWriteIDLen {
		return "", &fence.InvalidError{Field: "WriteID", Reason: fmt.Sprintf("%d bytes, more than %d", len(o.WriteID), maxWriteIDLen)}
	}
	for _, c := range []byte(o.WriteID) {
		if c < 0x20 || c > 0x7e {
			return "", &fence.InvalidError{Field: "WriteID", Reason: "not printable ASCII"}
		}
	}
	return o.WriteID, nil
}

// Upload stores body under key if token >= highest(key), as one
// conditional request (see the package documentation), and returns the
// attributes of the object written. A lower token gets a
// *fence.StaleTokenError carrying the highest token, and changes nothing.
// body may be nil (an empty object); an io.Seeker is sought back for a
// retry, a plain io.Reader is never read twice (ErrBodyConsumed). opts may
// be nil. Bad input, and a resource r that is not one of New's, get an
// error matching fence.ErrInvalid, as Put's, and errors are
// *fence.OpError for op "put".
//
// When ctx is done first, Upload returns an error wrapping ctx.Err(); the
// write may have been applied. Retry with the same token, body and
// opts.WriteID to have it recognised.
func Upload(ctx context.Context, r *fence.Resource, key string, token fence.Token, body io.Reader, opts *UploadOptions) (*storage.ObjectAttrs, error) {
	b, err := native(ctx, r, key, &token)
	if err != nil {
		return nil, fail(ctx, "put", key, err)
	}
	attrs, err := b.upload(ctx, key, token, body, opts)
	if err != nil {
		return nil, fail(ctx, "put", key, err)
	}
	return attrs, nil
}

// upload is Upload on a valid key and token.
func (b *bucket) upload(ctx context.Context, key string, token fence.Token, body io.Reader, opts *UploadOptions) (*storage.ObjectAttrs, error) {
	id, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if body == nil {
		body = bytes.NewReader(nil)
	}
	bd, err := newBody(body)
	if err != nil {
		return nil, err
	}
	return b.write(ctx, &writeReq{key: key, token: token, writeID: id, body: bd, opts: opts})
}

// writeReq is one fenced write: an upload or a tombstone.
type writeReq struct {
	key       string // as the caller named it, for errors
	name      string // the object name: prefix + key
	token     fence.Token
	writeID   string
	tombstone bool
	body      *body
	opts      *UploadOptions // nil for defaults and for tombstones
}

// write runs the fenced write loop: read the record, check the token,
// write under a generation precondition, and on failure read again.
func (b *bucket) write(ctx context.Context, req *writeReq) (*storage.ObjectAttrs, error) {
	name, err := b.objectName(req.key)
	if err != nil {
		return nil, err
	}
	req.name = name
	var last error // the failure of the previous attempt
	maybe := false // an earlier attempt of this write may have been applied
	for attempt := 1; ; attempt++ {
		rec, err := b.read(ctx, req.key)
		if err != nil {
			return nil, err
		}
		switch {
		case rec.exists && rec.WriteID == req.writeID && rec.Token == req.token && rec.Tombstone == req.tombstone:
			return rec.attrs, nil // applied already, maybe by an attempt whose answer was lost
		case req.token < rec.Token && maybe:
			// Our write may have landed and been replaced since: saying
			// "stale" would claim it was refused.
			return nil, &fence.UnknownOutcomeError{Key: req.key, Token: req.token, Highest: rec.Token, Err: last}
		case req.token < rec.Token:
			return nil, &fence.StaleTokenError{Key: req.key, Token: req.token, Highest: rec.Token}
		case req.tombstone && rec.Tombstone && req.token == rec.Token:
			return rec.attrs, nil // deleted already with this token
		}
		if last != nil {
			if b.opts.MaxAttempts > 0 && attempt > b.opts.MaxAttempts {
				return nil, fmt.Errorf("gave up after %d attempts: %w", b.opts.MaxAttempts, last)
			}
			ok, err := req.body.rewind()
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, &BodyConsumedError{Key: req.key, Err: last}
			}
		}
		attrs, err := b.attempt(ctx, req, rec)
		if err == nil {
			b.seen.Store(true)
			return attrs, nil
		}
		if req.body.err != nil {
			return nil, fmt.Errorf("reading the body: %w", req.body.err)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("upload: %w", err)
		}
		o := classify(err)
		if o == permanent {
			if isNotFound(err) {
				return nil, driver.StoreMissing(fmt.Errorf("upload: %w: %w", storage.ErrBucketNotExist, err))
			}
			return nil, fmt.Errorf("upload: %w", err)
		}
		last = err
		// A lost answer or a 408/5xx may come after the write was applied;
		// a 412 or 429 means it was not.
		maybe = maybe || o == ambiguous || (o == throttled && !isTooMany(err))
		if err := backoff.Sleep(ctx, b.pause(o, attempt)); err != nil {
			return nil, fmt.Errorf("backing off after %v: %w", last, err)
		}
	}
}

// attempt writes once, under the precondition that the object is still
// the generation of rec (or still absent).
func (b *bucket) attempt(ctx context.Context, req *writeReq, rec record) (*storage.ObjectAttrs, error) {
	cond := storage.Conditions{DoesNotExist: true}
	if rec.exists {
		cond = storage.Conditions{GenerationMatch: rec.generation}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	obj := b.handle.Object(req.name).Retryer(storage.WithPolicy(storage.RetryNever))
	if !b.unconditional {
		obj = obj.If(cond)
	}
	w := obj.NewWriter(ctx)
	w.ChunkSize = 0 // one request, nothing buffered
	var user map[string]string
	if o := req.opts; o != nil {
		w.ContentType, w.CacheControl, w.ContentDisposition = o.ContentType, o.CacheControl, o.ContentDisposition
		w.ContentEncoding, w.ContentLanguage = o.ContentEncoding, o.ContentLanguage
		user = o.Metadata
	}
	if req.tombstone {
		w.ContentType = "application/octet-stream"
	}
	w.Metadata = fencedobj.Record{Token: req.token, WriteID: req.writeID, Tombstone: req.tombstone}.Format(user)
	if _, err := io.Copy(w, req.body); err != nil {
		if req.body.err != nil {
			cancel()
			_ = w.Close()
			return nil, err
		}
		if cerr := w.Close(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return w.Attrs(), nil
}
