package s3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// state is what a write learns from HeadObject before it writes.
type state struct {
	exists bool   // an object (a value or a tombstone) is there
	etag   string // its ETag, as S3 quotes it
	meta
}

// head reads the state of key. A missing object is the zero state; fence
// metadata that does not parse is a *fence.CorruptError.
func (b *Bucket) head(ctx context.Context, key string) (state, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)})
	if err != nil {
		if isNotFound(err) {
			return state{}, nil
		}
		return state{}, fmt.Errorf("fence/s3: head %q: %w", key, err)
	}
	m, err := parseMeta(key, out.Metadata)
	if err != nil {
		return state{}, err
	}
	return state{exists: true, etag: aws.ToString(out.ETag), meta: m}, nil
}

// writeIDLen is the length of a write id: 16 random bytes in hex.
const writeIDLen = 32

// newWriteID returns a fresh random write id.
func newWriteID() string {
	var b [writeIDLen / 2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
