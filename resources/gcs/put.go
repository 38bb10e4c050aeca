package gcs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/fencekit/fence"
)

// putContentType is the content type of values stored with Put.
const putContentType = "application/octet-stream"

// Put implements fence.Resource: an Upload of value with content type
// application/octet-stream. Its write id is derived from token and value,
// so a Put retried with the same arguments after an ambiguous failure finds
// its own write and does not write again.
func (r *Resource) Put(ctx context.Context, name string, token fence.Token, value []byte) error {
	_, err := r.Upload(ctx, name, token, bytes.NewReader(value), &UploadOptions{
		ContentType: putContentType,
		WriteID:     putWriteID(token, value),
	})
	return err
}

// putWriteID is "put-" and 128 bits of SHA-256 over token and value.
func putWriteID(token fence.Token, value []byte) string {
	h := sha256.New()
	h.Write([]byte(token.String()))
	h.Write([]byte{0})
	h.Write(value)
	return "put-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Delete implements fence.Resource. If token >= highest(name) it replaces
// the object with a zero-length tombstone carrying token (MetaTombstone),
// under the same generation precondition as Upload; deleting an absent
// name writes a tombstone too. A tombstone already carrying token is left
// as it is. The object is never removed, so the high-water mark outlives
// the data.
func (r *Resource) Delete(ctx context.Context, name string, token fence.Token) error {
	if err := checkWrite(ctx, name, token); err != nil {
		return err
	}
	b, _ := newBody(bytes.NewReader(nil)) // seeking a bytes.Reader cannot fail
	_, err := r.write(ctx, &writeReq{name: name, token: token, writeID: newWriteID(), tombstone: true, body: b})
	return err
}
