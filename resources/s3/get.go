package s3

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
)

// Object is an object read with GetObject. The caller closes Body.
type Object struct {
	// Body is the object's content.
	Body io.ReadCloser
	// Token is the token of the write that stored it; 0 for an object
	// written without fencing.
	Token fence.Token
	// WriteID is the random id of that write; empty when unfenced.
	WriteID string
	// ETag, ContentType, ContentLength and VersionID are as S3 reports
	// them.
	ETag          string
	ContentType   string
	ContentLength int64
	VersionID     string
	// Metadata is the user metadata without the package's keys.
	Metadata map[string]string
}

// GetObject reads key in one request, so the body and the token belong to
// the same write. A missing key or a tombstone gets a *fence.NotFoundError
// (Tombstone set for the latter); corrupt fence metadata gets an error
// matching fence.ErrCorrupt; a bad key, or a resource r that is not one
// of New's, fence.ErrInvalid; a missing
// bucket, fence.ErrStoreMissing. Errors are *fence.OpError for op "get",
// as Get's. Unlike Get, GetObject returns an object written without
// fencing, with Token 0.
func GetObject(ctx context.Context, r *fence.Resource, key string) (*Object, error) {
	b, err := native(ctx, r, key, 0, false)
	if err != nil {
		return nil, fail(ctx, "get", key, err)
	}
	obj, err := b.getObject(ctx, key)
	if err != nil {
		return nil, fail(ctx, "get", key, err)
	}
	return obj, nil
}

// getObject is GetObject on a valid key.
func (b *bucket) getObject(ctx context.Context, key string) (*Object, error) {
	name, err := b.objectKey(key)
	if err != nil {
		return nil, err
	}
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(name)})
	if err != nil {
		if isNotFound(err) {
			return nil, &fence.NotFoundError{Key: key}
		}
		return nil, missingBucket(err)
	}
	b.seen.Store(true)
	m, err := parseMeta(key, out.Metadata)
	if err != nil {
		out.Body.Close()
		return nil, err
	}
	if m.Tombstone {
		out.Body.Close()
		return nil, &fence.NotFoundError{Key: key, Tombstone: true}
	}
	size := aws.ToInt64(out.ContentLength)
	var rd io.ReadCloser = out.Body
	if m.claimed {
		// The claim's write id follows the value.
		if size < fencedobj.WriteIDLen {
			out.Body.Close()
			return nil, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("a claimed object of %d bytes, shorter than its write id", size)}
		}
		size -= fencedobj.WriteIDLen
		rd = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(out.Body, size), out.Body}
	}
	return &Object{
		Body:          rd,
		Token:         m.Token,
		WriteID:       m.WriteID,
		ETag:          aws.ToString(out.ETag),
		ContentType:   aws.ToString(out.ContentType),
		ContentLength: size,
		VersionID:     aws.ToString(out.VersionId),
		Metadata:      userMeta(out.Metadata),
	}, nil
}
