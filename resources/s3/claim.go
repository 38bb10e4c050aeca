package s3

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
	"github.com/fencekit/fence/internal/s3conn"
)

// Claim implements driver.Resource: it raises the object's token to
// token and keeps its bytes, content type and user metadata. It reads the
// object with GetObject and, if token is at least the object's token,
// writes the same bytes back with the new token and a new write id, on
// If-Match of the ETag it read, so that nothing written in between is
// replaced; a tombstone is replaced by a tombstone carrying token, and a
// key without an object gets one, on If-None-Match: *. A lost race reads
// again; a lost answer is settled by reading the object back (a token
// equal to token is the claim). The value is held in memory, up to
// Options.MaxBufferedBody bytes; a larger object is refused with an error
// matching fence.ErrInvalid. Unfenced, Claim does nothing.
//
// S3 derives ETags from the bytes (see "ETags name contents" in the
// package doc), so writing the same bytes back would keep the ETag, and a
// Put that read the object before the claim would still pass If-Match
// with its lower token after it. The claim therefore stores the value
// followed by its write id and marks the object with MetaClaimed;
// GetObject and Get return the value without it.
func (b *bucket) Claim(ctx context.Context, key string, token fence.Token) error {
	if b.unfenced {
		return nil
	}
	name, err := b.objectKey(key)
	if err != nil {
		return err
	}
	id := fencedobj.NewWriteID()
	l := &fencedobj.Loop{Key: key, Token: token, Backoff: b.backoff}
	for n := 0; ; n++ {
		if err := l.Pause(ctx, n); err != nil {
			return err
		}
		w, st, err := b.claimRead(ctx, key, name, id, token)
		if err != nil {
			return l.ReadFailed(ctx, err)
		}
		switch {
		case st.exists && st.Token == token:
			return nil // claimed already, by a lost PUT of ours or the token's holder
		case token < st.Token:
			return l.Stale(st.Token)
		}
		_, err = b.putOnce(ctx, w, id, st)
		if err == nil {
			return nil
		}
		if err := l.Failed(ctx, err, st.etag, s3conn.LostRace(err) || st.exists && isNotFound(err), ambiguous(err), missingBucket); err != nil {
			return err
		}
	}
}

// claimRead reads the object of key whole, in one request, and returns
// the write that claims it with token and the state that write is
// conditioned on. An object written without fencing (token 0) is
// claimed as any fenced write may replace it.
func (b *bucket) claimRead(ctx context.Context, key, name, id string, token fence.Token) (*write, state, error) {
	// A tombstone's body is its write id, as Delete writes it.
	w := &write{key: key, name: name, token: token, tombstone: true, body: fencedobj.BytesBody([]byte(id))}
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(name)})
	if err != nil {
		if !isNotFound(err) {
			return nil, state{}, missingBucket(err)
		}
		if err := b.absent(ctx, name); err != nil {
			return nil, state{}, err
		}
		return w, state{}, nil
	}
	defer out.Body.Close()
	b.seen.Store(true)
	m, err := parseMeta(key, out.Metadata)
	if err != nil {
		return nil, state{}, err
	}
	st := state{exists: true, etag: aws.ToString(out.ETag), meta: m}
	if m.Tombstone || token < m.Token {
		return w, st, nil
	}
	data, err := io.ReadAll(io.LimitReader(out.Body, b.maxBuffered+1))
	if err != nil {
		return nil, state{}, fmt.Errorf("reading the object: %w", err)
	}
	if int64(len(data)) > b.maxBuffered {
		return nil, state{}, &fence.InvalidError{Field: "object", Reason: fmt.Sprintf("longer than MaxBufferedBody (%d bytes), too large to claim", b.maxBuffered)}
	}
	if m.claimed {
		if len(data) < fencedobj.WriteIDLen {
			return nil, state{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("a claimed object of %d bytes, shorter than its write id", len(data))}
		}
		data = data[:len(data)-fencedobj.WriteIDLen]
	}
	// The value followed by this claim's write id: bytes no object held
	// before, so an ETag no slower writer can have read.
	data = append(data, id...)
	w.tombstone, w.claimed = false, true
	w.body = fencedobj.BytesBody(data)
	w.contentType = aws.ToString(out.ContentType)
	w.meta = userMeta(out.Metadata)
	return w, st, nil
}
