package azblob

import (
	"context"
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
)

// PutOptions are the optional settings of PutBlob.
type PutOptions struct {
	// ContentType is the blob's media type. Default: none (Azure records
	// application/octet-stream).
	ContentType string
	// Metadata is the blob's user metadata (x-ms-meta-*). Names must be C#
	// identifiers other than MetaToken, MetaWriteID and MetaTombstone in
	// any case; values printable ASCII without leading or trailing
	// spaces; all of it, with the package's names, within Azure's 8 KiB.
	Metadata map[string]string
	// HTTPHeaders, when set, are the blob's standard properties (cache
	// control, content encoding, disposition, language). ContentType,
	// when given, overrides BlobContentType there.
	HTTPHeaders *blob.HTTPHeaders
}

// PutBlob writes body under key if token is at least the highest token
// the blob has seen, in one conditional request (see the package doc). A
// lower token gets a *fence.StaleTokenError carrying the highest token and
// writes nothing; so does a blob whose fence metadata is corrupt (an error
// matching fence.ErrCorrupt). A bad key (see the package doc, "Names"),
// token 0, bad metadata, or a resource r that is not one of New's gets an
// error matching fence.ErrInvalid. Errors are *fence.OpError for op
// "put", as Put's.
//
// A body that is an io.ReadSeeker is streamed from its current offset to
// its end and is sought back to that offset on every retry; any other body
// is read into memory first, up to Options.MaxBufferedBody bytes, and a
// longer one is refused with fence.ErrInvalid. A body longer than
// Options.MaxSinglePut is staged in blocks and committed by one
// conditional Put Block List. A nil body is an empty blob. opts may be
// nil.
//
// PutBlob retries lost races until ctx is done, and reconciles lost
// answers by reading the blob back (see the package doc). When that cannot
// settle whether the write was applied, the error is an
// *fence.UnknownOutcomeError; retrying with the same token and body is
// harmless.
func PutBlob(ctx context.Context, r *fence.Resource, key string, token fence.Token, body io.Reader, opts *PutOptions) (*PutResult, error) {
	s, err := native(ctx, r, key, token, true)
	if err != nil {
		return nil, fail(ctx, "put", key, err)
	}
	res, err := s.putBlob(ctx, key, token, body, opts)
	if err != nil {
		return nil, fail(ctx, "put", key, err)
	}
	return res, nil
}

// putBlob is PutBlob on valid input.
func (s *store) putBlob(ctx context.Context, key string, token fence.Token, body io.Reader, opts *PutOptions) (*PutResult, error) {
	if opts == nil {
		opts = &PutOptions{}
	}
	if err := checkUserMeta(opts.Metadata); err != nil {
		return nil, err
	}
	bd, err := fencedobj.NewBody(body, s.maxBuffered)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, &write{
		key:         key,
		token:       token,
		body:        bd,
		contentType: opts.ContentType,
		meta:        opts.Metadata,
		headers:     opts.HTTPHeaders,
	})
}
