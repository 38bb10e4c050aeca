package azblob

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/fencedobj"
)

// state is what a write learns from Get Blob Properties before it writes.
type state struct {
	exists bool        // a blob (a value or a tombstone) is there
	etag   azcore.ETag // its ETag
	fencedobj.Record
	all map[string]*string // all its metadata, which a Claim keeps
}

// head reads the state of the blob name of key in one Get Blob
// Properties. A missing blob is the zero state; fence metadata that does
// not parse is a *fence.CorruptError; a missing container, an error
// matching fence.ErrStoreMissing (Azure names ContainerNotFound in the
// x-ms-error-code header of its answer to HEAD).
func (s *store) head(ctx context.Context, key, name string) (state, error) {
	resp, err := s.c.NewBlobClient(name).GetProperties(ctx, nil)
	if err != nil {
		if isNotFound(err) {
			return state{}, nil
		}
		return state{}, azblobconn.OneLine(err)
	}
	m, err := parseMeta(key, resp.Metadata)
	if err != nil {
		return state{}, err
	}
	st := state{exists: true, Record: m, all: resp.Metadata}
	if resp.ETag != nil {
		st.etag = *resp.ETag
	}
	return st, nil
}
