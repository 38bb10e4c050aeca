package s3

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence/internal/s3conn"
)

// state is what a write learns from HeadObject before it writes.
type state struct {
	exists bool   // an object (a value or a tombstone) is there
	etag   string // its ETag, as S3 quotes it
	meta
}

// head reads the state of key. A missing object is the zero state; fence
// metadata that does not parse is a *fence.CorruptError; a missing bucket,
// an error matching fence.ErrStoreMissing.
func (b *bucket) head(ctx context.Context, key string) (state, error) {
	name, err := b.objectKey(key)
	if err != nil {
		return state{}, err
	}
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.name), Key: aws.String(name)})
	if err != nil {
		if isNotFound(err) {
			return state{}, b.absent(ctx, name)
		}
		return state{}, missingBucket(err)
	}
	b.seen.Store(true)
	m, err := parseMeta(key, out.Metadata)
	if err != nil {
		return state{}, err
	}
	return state{exists: true, etag: aws.ToString(out.ETag), meta: m}, nil
}

// absent settles a 404 to HeadObject of name, which S3 gives to a missing
// bucket too, without a body to tell them apart: until the bucket was seen
// to exist, it asks again with GetObject (the same permission), whose
// answer names NoSuchBucket. It returns an error matching
// fence.ErrStoreMissing for a missing bucket, and nil otherwise (the key is
// absent, or GetObject could not tell: HeadObject's word stands).
func (b *bucket) absent(ctx context.Context, name string) error {
	if b.seen.Load() {
		return nil
	}
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(name)})
	switch {
	case err == nil:
		out.Body.Close() // written since: the bucket is there
	case s3conn.CodeOf(err) == "NoSuchBucket":
		return missingBucket(err)
	case !isNotFound(err):
		return nil
	}
	b.seen.Store(true)
	return nil
}
