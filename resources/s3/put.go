package s3

import (
	"context"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
)

// PutOptions are the optional settings of PutObject.
type PutOptions struct {
	// ContentType is the object's media type. Default: none (S3 records
	// binary/octet-stream).
	ContentType string
	// Metadata is the object's user metadata (x-amz-meta-*). Keys must
	// not be MetaToken, MetaWriteID, MetaTombstone or MetaClaimed, in any
	// case, and all of it, with the package's keys, must fit S3's 2 KB.
	Metadata map[string]string
	// Input, when set, is called on a fresh input before each PUT to set
	// what PutOptions does not (storage class, encryption, cache control,
	// checksums, ACLs). The package then sets Bucket, Key, Body,
	// ContentLength, ContentType (when given above), Metadata, IfMatch
	// and IfNoneMatch, overriding what Input set there.
	Input func(*s3.PutObjectInput)
}

// PutObject writes body under key if token is at least the highest token
// the object has seen, in one conditional PUT (see the package doc). A
// lower token gets a *fence.StaleTokenError carrying the highest token and
// writes nothing; so does an object whose fence metadata is corrupt (an
// error matching fence.ErrCorrupt). A key that is empty, longer than
// MaxKeyLen bytes less Options.Prefix, not valid UTF-8 or holding a NUL,
// token 0, bad metadata, or a resource r that is not one of New's gets an
// error matching fence.ErrInvalid. Errors are *fence.OpError for op
// "put", as Put's.
//
// A body that is an io.ReadSeeker is streamed from its current offset to
// its end and is sought back to that offset on every retry; any other body
// is read into memory first, up to Options.MaxBufferedBody bytes, and a
// longer one is refused with fence.ErrInvalid. A nil body is an empty
// object. opts may be nil.
//
// PutObject retries lost races until ctx is done, and reconciles lost
// answers by reading the object back (see the package doc). When that
// cannot settle whether the write was applied, the error is an
// *fence.UnknownOutcomeError; retrying with the same token and body is
// harmless.
func PutObject(ctx context.Context, r *fence.Resource, key string, token fence.Token, body io.Reader, opts *PutOptions) (*PutResult, error) {
	b, err := native(ctx, r, key, token, true)
	if err != nil {
		return nil, fail(ctx, "put", key, err)
	}
	res, err := b.putObject(ctx, key, token, body, opts)
	if err != nil {
		return nil, fail(ctx, "put", key, err)
	}
	return res, nil
}

// putObject is PutObject on valid input.
func (b *bucket) putObject(ctx context.Context, key string, token fence.Token, body io.Reader, opts *PutOptions) (*PutResult, error) {
	if opts == nil {
		opts = &PutOptions{}
	}
	if err := checkUserMeta(opts.Metadata); err != nil {
		return nil, err
	}
	bd, err := fencedobj.NewBody(body, b.maxBuffered)
	if err != nil {
		return nil, err
	}
	return b.write(ctx, &write{
		key:         key,
		token:       token,
		body:        bd,
		contentType: opts.ContentType,
		meta:        opts.Metadata,
		input:       opts.Input,
	})
}
