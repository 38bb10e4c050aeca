package s3

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
	"github.com/fencekit/fence/internal/s3conn"
)

// PutResult describes an applied write.
type PutResult struct {
	// ETag is the ETag of the object written.
	ETag string
	// VersionID is its version id in a versioned bucket; empty otherwise
	// and when the write was reconciled.
	VersionID string
	// WriteID is the random id recorded in the object's MetaWrite
	// metadata.
	WriteID string
	// Attempts is the number of conditional PUTs the package sent (the
	// SDK's own retries of one PUT count once).
	Attempts int
	// Reconciled is true when a PUT lost its answer and reading the object
	// back showed it had been applied.
	Reconciled bool
}

// write is one fenced PUT: of a value, or of a tombstone.
type write struct {
	key         string // as the caller named it, for errors
	name        string // the object key: prefix + key
	token       fence.Token
	body        *fencedobj.Body
	contentType string
	meta        map[string]string
	input       func(*s3.PutObjectInput)
	tombstone   bool
	claimed     bool // a Claim's rewrite: body ends with the write id
}

// write runs the fenced write loop: read the object's token and ETag,
// refuse a lower token, PUT on condition that the object is still the one
// read; on a lost race or a lost answer, read again and retry.
func (b *bucket) write(ctx context.Context, w *write) (*PutResult, error) {
	name, err := b.objectKey(w.key)
	if err != nil {
		return nil, err
	}
	w.name = name
	id := fencedobj.NewWriteID()
	if w.tombstone {
		// A unique body gives every tombstone its own ETag.
		w.body = fencedobj.BytesBody([]byte(id))
	}
	res := &PutResult{WriteID: id}
	l := &fencedobj.Loop{Key: w.key, Token: w.token, Backoff: b.backoff}
	for n := 0; ; n++ {
		if err := l.Pause(ctx, n); err != nil {
			return nil, err
		}
		st, err := b.head(ctx, w.key)
		if err != nil {
			return nil, l.ReadFailed(ctx, err)
		}
		if l.Maybe && st.exists && st.WriteID == id && st.Token == w.token && st.etag != l.Conditioned {
			res.ETag, res.Reconciled = st.etag, true
			return res, nil
		}
		if !b.unfenced && w.token < st.Token {
			// An unknown outcome if ours may have been applied and then
			// overtaken: a stale token would be a false refusal.
			return nil, l.Stale(st.Token)
		}
		if w.tombstone && !b.unfenced && st.Tombstone && st.Token == w.token {
			res.ETag = st.etag // already deleted with this token: nothing to write
			return res, nil
		}
		out, err := b.putOnce(ctx, w, id, st)
		res.Attempts++
		if err == nil {
			res.ETag, res.VersionID = aws.ToString(out.ETag), aws.ToString(out.VersionId)
			return res, nil
		}
		// Not applied on a lost race, or on 404: the object read was
		// deleted since (If-Match on a missing key).
		if err := l.Failed(ctx, err, st.etag, s3conn.LostRace(err) || st.exists && isNotFound(err), ambiguous(err), missingBucket); err != nil {
			return nil, err
		}
	}
}

// putOnce sends one PUT of w conditioned on the object being st.
func (b *bucket) putOnce(ctx context.Context, w *write, id string, st state) (*s3.PutObjectOutput, error) {
	if err := w.body.Rewind(); err != nil {
		return nil, err
	}
	in := &s3.PutObjectInput{}
	if w.input != nil {
		w.input(in)
	}
	in.Bucket, in.Key = aws.String(b.name), aws.String(w.name)
	in.Body, in.ContentLength = w.body.R, aws.Int64(w.body.Size)
	if w.contentType != "" {
		in.ContentType = aws.String(w.contentType)
	}
	in.Metadata = formatMeta(w.meta, meta{Record: fencedobj.Record{Token: w.token, WriteID: id, Tombstone: w.tombstone}, claimed: w.claimed})
	in.IfMatch, in.IfNoneMatch = nil, nil
	if !b.unfenced {
		if st.exists {
			in.IfMatch = aws.String(st.etag)
		} else {
			in.IfNoneMatch = aws.String("*")
		}
	}
	// One request per PUT: the SDK's own retries would resend it after a
	// lost answer and hide that the first may have been applied.
	return b.client.PutObject(ctx, in, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
}
