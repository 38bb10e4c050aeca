package azblob

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/fencedobj"
)

// Claim implements driver.Resource: it raises the blob's token to token
// and keeps its content, properties and user metadata. It reads the
// blob's properties and, if token is at least the blob's token, sets its
// metadata to the same with the new token and a new write id, in one Set
// Blob Metadata on If-Match of the ETag it read. Azure gives a blob a new
// ETag on every change, metadata included, so a write that read the blob
// before the claim fails its condition after it. A tombstone stays a
// tombstone, with token; a key without a blob gets a tombstone, on
// If-None-Match: *. A lost race reads again; a lost answer is settled by
// reading the blob back (a token equal to token is the claim). The
// content never passes through memory: a claim costs two requests
// whatever the blob's size. Unfenced, Claim does nothing.
func (s *store) Claim(ctx context.Context, key string, token fence.Token) error {
	if s.unfenced {
		return nil
	}
	name, err := s.blobOf(key)
	if err != nil {
		return err
	}
	l := &fencedobj.Loop{Key: key, Token: token, Backoff: s.backoff}
	for n := 0; ; n++ {
		if err := l.Pause(ctx, n); err != nil {
			return err
		}
		st, err := s.head(ctx, key, name)
		if err != nil {
			return l.ReadFailed(ctx, err)
		}
		switch {
		case st.exists && st.Token == token:
			return nil // claimed already, by a lost write of ours or the token's holder
		case token < st.Token:
			return l.Stale(st.Token)
		}
		id := fencedobj.NewWriteID()
		if st.exists {
			md := formatMeta(userMeta(st.all), fencedobj.Record{Token: token, WriteID: id, Tombstone: st.Tombstone})
			_, err = s.c.NewBlobClient(name).SetMetadata(noRetries(ctx), md, &blob.SetMetadataOptions{AccessConditions: s.conditions(st)})
		} else {
			_, _, err = s.putOnce(ctx, &write{key: key, name: name, token: token, tombstone: true, body: fencedobj.BytesBody(nil)}, id, st)
		}
		if err == nil {
			return nil
		}
		if err := l.Failed(ctx, err, string(st.etag), lostRace(err) || st.exists && isNotFound(err), ambiguous(err), azblobconn.OneLine); err != nil {
			return err
		}
	}
}
