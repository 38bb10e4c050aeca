package azblob

import (
	"context"
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn"
)

// Blob is a blob read with GetBlob. The caller closes Body.
type Blob struct {
	// Body is the blob's content.
	Body io.ReadCloser
	// Token is the token of the write that stored it; 0 for a blob
	// written without fencing.
	Token fence.Token
	// WriteID is the random id of that write; empty when unfenced.
	WriteID string
	// ETag, ContentType and ContentLength are as Azure reports them.
	ETag          azcore.ETag
	ContentType   string
	ContentLength int64
	// Metadata is the user metadata without the package's names (with
	// the names capitalised, as the SDK returns them).
	Metadata map[string]string
}

// GetBlob reads key in one Get Blob request, so the body and the token
// belong to the same write. A missing key or a tombstone gets a
// *fence.NotFoundError (Tombstone set for the latter); corrupt fence
// metadata gets an error matching fence.ErrCorrupt; a bad key, or a
// resource r that is not one of New's, fence.ErrInvalid; a missing
// container, fence.ErrStoreMissing. Errors are *fence.OpError for op
// "get", as Get's. Unlike Get, GetBlob returns a blob written without
// fencing, with Token 0.
func GetBlob(ctx context.Context, r *fence.Resource, key string) (*Blob, error) {
	s, err := native(ctx, r, key, 0, false)
	if err != nil {
		return nil, fail(ctx, "get", key, err)
	}
	b, err := s.getBlob(ctx, key)
	if err != nil {
		return nil, fail(ctx, "get", key, err)
	}
	return b, nil
}

// getBlob is GetBlob on a valid key.
func (s *store) getBlob(ctx context.Context, key string) (*Blob, error) {
	name, err := s.blobOf(key)
	if err != nil {
		return nil, err
	}
	resp, err := s.c.NewBlobClient(name).DownloadStream(ctx, nil)
	if err != nil {
		if isNotFound(err) {
			return nil, &fence.NotFoundError{Key: key}
		}
		return nil, azblobconn.OneLine(err)
	}
	m, err := parseMeta(key, resp.Metadata)
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	if m.Tombstone {
		resp.Body.Close()
		return nil, &fence.NotFoundError{Key: key, Tombstone: true}
	}
	b := &Blob{
		Body:     resp.Body,
		Token:    m.Token,
		WriteID:  m.WriteID,
		ETag:     etagOf(resp.ETag),
		Metadata: userMeta(resp.Metadata),
	}
	if resp.ContentType != nil {
		b.ContentType = *resp.ContentType
	}
	if resp.ContentLength != nil {
		b.ContentLength = *resp.ContentLength
	}
	return b, nil
}
