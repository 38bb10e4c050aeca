package gcs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
)

// putContentType is the content type of values stored with Put.
const putContentType = "application/octet-stream"

// Put implements driver.Resource: an upload of value with content
// type application/octet-stream. Its write id is derived from token and
// value, so a Put retried with the same arguments after an ambiguous
// failure finds its own write and does not write again.
func (b *bucket) Put(ctx context.Context, key string, token fence.Token, value []byte) error {
	bd, _ := newBody(bytes.NewReader(value)) // seeking a bytes.Reader cannot fail
	_, err := b.write(ctx, &writeReq{key: key, token: token, writeID: putWriteID(token, value), body: bd,
		opts: &UploadOptions{ContentType: putContentType}})
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

// Delete implements driver.Resource. If token >= highest(key) it
// replaces the object with a zero-length tombstone carrying token
// (MetaTombstone), under the same generation precondition as Upload;
// deleting an absent key writes a tombstone too. A tombstone already
// carrying token is left as it is. The object is never removed, so the
// high-water mark outlives the data.
func (b *bucket) Delete(ctx context.Context, key string, token fence.Token) error {
	bd, _ := newBody(bytes.NewReader(nil)) // seeking a bytes.Reader cannot fail
	_, err := b.write(ctx, &writeReq{key: key, token: token, writeID: fencedobj.NewWriteID(), tombstone: true, body: bd})
	return err
}
