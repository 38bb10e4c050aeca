package azblob

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/fencedobj"
)

// PutResult describes an applied write.
type PutResult struct {
	// ETag is the ETag of the blob written.
	ETag azcore.ETag
	// WriteID is the random id recorded in the blob's MetaWriteID
	// metadata.
	WriteID string
	// Attempts is the number of conditional writes (Put Blob or Put Block
	// List) the package sent.
	Attempts int
	// Blocks is the number of blocks staged by the last attempt; 0 when
	// the body went in one Put Blob.
	Blocks int
	// Reconciled is true when a write lost its answer and reading the blob
	// back showed it had been applied.
	Reconciled bool
}

// write is one fenced write: of a value, or of a tombstone.
type write struct {
	key         string // as the caller named it, for errors
	name        string // the blob name: prefix + key
	token       fence.Token
	body        *fencedobj.Body
	contentType string
	meta        map[string]string
	headers     *blob.HTTPHeaders
	tombstone   bool
}

// noRetries makes the SDK send a request once: its own retries would
// resend a write after a lost answer and hide that the first may have
// been applied.
func noRetries(ctx context.Context) context.Context {
	return policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
}

// write runs the fenced write loop: read the blob's token and ETag,
// refuse a lower token, write on condition that the blob is still the one
// read; on a lost race or a lost answer, read again and retry.
func (s *store) write(ctx context.Context, w *write) (*PutResult, error) {
	name, err := s.blobOf(w.key)
	if err != nil {
		return nil, err
	}
	w.name = name
	if w.body == nil {
		w.body = fencedobj.BytesBody(nil) // a tombstone's
	}
	id := fencedobj.NewWriteID()
	res := &PutResult{WriteID: id}
	l := &fencedobj.Loop{Key: w.key, Token: w.token, Backoff: s.backoff}
	for n := 0; ; n++ {
		if err := l.Pause(ctx, n); err != nil {
			return nil, err
		}
		st, err := s.head(ctx, w.key, name)
		if err != nil {
			return nil, l.ReadFailed(ctx, err)
		}
		if l.Maybe && st.exists && st.WriteID == id && st.Token == w.token && string(st.etag) != l.Conditioned {
			res.ETag, res.Reconciled = st.etag, true
			return res, nil
		}
		if !s.unfenced && w.token < st.Token {
			// An unknown outcome if ours may have been applied and then
			// overtaken: a stale token would be a false refusal.
			return nil, l.Stale(st.Token)
		}
		if w.tombstone && !s.unfenced && st.Tombstone && st.Token == w.token {
			res.ETag = st.etag // already deleted with this token: nothing to write
			return res, nil
		}
		etag, blocks, err := s.putOnce(ctx, w, id, st)
		res.Blocks = blocks
		if na, ok := errors.AsType[notApplied](err); ok {
			// A staged block failed: the blob is as it was.
			switch {
			case ctx.Err() != nil:
				return nil, l.Unknown(fencedobj.WithCtx(ctx, azblobconn.OneLine(na.err)), 0)
			case !ambiguous(na.err):
				return nil, azblobconn.OneLine(na.err)
			}
			l.LastErr = na.err
			continue
		}
		res.Attempts++
		if err == nil {
			res.ETag = etag
			return res, nil
		}
		// Not applied on a lost race, or on 404: the blob read was
		// deleted since.
		if err := l.Failed(ctx, err, string(st.etag), lostRace(err) || st.exists && isNotFound(err), ambiguous(err), azblobconn.OneLine); err != nil {
			return nil, err
		}
	}
}

// conditions returns the access conditions of a write over st: If-Match
// on its ETag, or If-None-Match: * when there was no blob; none when
// unfenced.
func (s *store) conditions(st state) *blob.AccessConditions {
	if s.unfenced {
		return nil
	}
	m := &blob.ModifiedAccessConditions{}
	if st.exists {
		etag := st.etag
		m.IfMatch = &etag
	} else {
		anyTag := azcore.ETagAny
		m.IfNoneMatch = &anyTag
	}
	return &blob.AccessConditions{ModifiedAccessConditions: m}
}

// putOnce sends one conditional write of w over st: a Put Blob, or for
// a body longer than MaxSinglePut, staged blocks and one Put Block List.
// It returns the new ETag and the number of blocks staged.
func (s *store) putOnce(ctx context.Context, w *write, id string, st state) (azcore.ETag, int, error) {
	md := formatMeta(w.meta, fencedobj.Record{Token: w.token, WriteID: id, Tombstone: w.tombstone})
	headers := w.headers
	if w.contentType != "" {
		h := blob.HTTPHeaders{}
		if headers != nil {
			h = *headers
		}
		h.BlobContentType = &w.contentType
		headers = &h
	}
	bb := s.c.NewBlockBlobClient(w.name)
	if w.body.Size <= s.singlePut {
		resp, err := bb.Upload(noRetries(ctx), w.body.Section(0, w.body.Size), &blockblob.UploadOptions{
			Metadata: md, HTTPHeaders: headers, AccessConditions: s.conditions(st),
		})
		if err != nil {
			return "", 0, err
		}
		return etagOf(resp.ETag), 0, nil
	}
	// Blocks staged do not change the blob or its ETag; only the commit
	// does, under the condition. Their ids are new on every attempt, so
	// blocks of another writer to the same blob never mix with ours.
	nblocks := (w.body.Size + s.blockSize - 1) / s.blockSize
	if nblocks > maxBlocks {
		return "", 0, &fence.InvalidError{Field: "body", Reason: fmt.Sprintf("%d bytes need %d blocks of BlockSize %d, more than Azure's %d", w.body.Size, nblocks, s.blockSize, maxBlocks)}
	}
	attempt := fencedobj.NewWriteID()
	ids := make([]string, 0, nblocks)
	for off := int64(0); off < w.body.Size; off += s.blockSize {
		n := min(s.blockSize, w.body.Size-off)
		bid := encodeBlockID(fmt.Sprintf("%s-%06d", attempt, len(ids)))
		if _, err := bb.StageBlock(ctx, bid, w.body.Section(off, n), nil); err != nil {
			// Nothing is committed: the blob is as it was.
			return "", len(ids), notApplied{err}
		}
		ids = append(ids, bid)
	}
	resp, err := bb.CommitBlockList(noRetries(ctx), ids, &blockblob.CommitBlockListOptions{
		Metadata: md, HTTPHeaders: headers, AccessConditions: s.conditions(st),
	})
	if err != nil {
		return "", len(ids), err
	}
	return etagOf(resp.ETag), len(ids), nil
}

// notApplied marks an error of a request that cannot have changed the
// blob (a staged block): the write loop reports it as it is, or after a
// transport failure retries it, but never counts it as a lost answer.
type notApplied struct{ err error }

func (e notApplied) Error() string { return e.err.Error() }
func (e notApplied) Unwrap() error { return e.err }

func etagOf(p *azcore.ETag) azcore.ETag {
	if p == nil {
		return ""
	}
	return *p
}

// encodeBlockID returns the base64 block id of id.
func encodeBlockID(id string) string { return base64.StdEncoding.EncodeToString([]byte(id)) }
