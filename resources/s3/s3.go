package s3

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
)

// MaxKeyLen is the longest object key S3 accepts, in bytes of UTF-8.
const MaxKeyLen = 1024

// DefaultMaxBufferedBody is the default of Options.MaxBufferedBody.
const DefaultMaxBufferedBody = 16 << 20

// API is the part of *s3.Client the package calls.
type API interface {
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

// Options configure a Bucket. The zero value is the default.
type Options struct {
	// MaxBufferedBody is the largest body, in bytes, that PutObject reads
	// into memory when the body is not an io.ReadSeeker (seekable bodies
	// are streamed whatever their size). Default: DefaultMaxBufferedBody
	// (16 MiB).
	MaxBufferedBody int64
	// MinBackoff and MaxBackoff bound the jittered, doubling pause before
	// a write reads the object again after losing a race. Defaults: 10ms
	// and 1s.
	MinBackoff, MaxBackoff time.Duration
	// MaxKeySegmentLen, when positive, is the longest part of a key
	// between slashes, in bytes; longer keys are refused with
	// fence.ErrInvalid. S3 has no such limit (default 0: none), but MinIO
	// keeps objects in a file system and refuses keys with a segment
	// longer than 255 bytes: set 255 for MinIO.
	MaxKeySegmentLen int
	// Unfenced switches the token check and the PUT conditions off. For
	// control runs only: every write is applied, whatever its token, so a
	// test can show that its checker fails when fencing is missing. The
	// token is still recorded. Default: false (fenced).
	Unfenced bool
}

// Bucket writes fenced objects into one S3 bucket. Create it with New. It
// is safe for concurrent use.
type Bucket struct {
	client      API
	bucket      string
	maxBuffered int64
	minBackoff  time.Duration
	maxBackoff  time.Duration
	maxSegment  int
	unfenced    bool
}

var _ fence.Resource = (*Bucket)(nil)

// New returns a Bucket writing into bucket through client, typically an
// *s3.Client. The bucket must exist. opts may be nil.
func New(client API, bucket string, opts *Options) (*Bucket, error) {
	if client == nil {
		return nil, &fence.InvalidError{Field: "client", Reason: "nil"}
	}
	if bucket == "" {
		return nil, &fence.InvalidError{Field: "bucket", Reason: "empty"}
	}
	b := &Bucket{
		client:      client,
		bucket:      bucket,
		maxBuffered: DefaultMaxBufferedBody,
		minBackoff:  10 * time.Millisecond,
		maxBackoff:  time.Second,
	}
	if opts == nil {
		return b, nil
	}
	if opts.MaxBufferedBody < 0 {
		return nil, &fence.InvalidError{Field: "MaxBufferedBody", Reason: fmt.Sprintf("%d is negative", opts.MaxBufferedBody)}
	}
	if opts.MaxBufferedBody > 0 {
		b.maxBuffered = opts.MaxBufferedBody
	}
	if opts.MinBackoff < 0 || opts.MaxBackoff < 0 {
		return nil, &fence.InvalidError{Field: "backoff", Reason: "negative"}
	}
	if opts.MinBackoff > 0 {
		b.minBackoff = opts.MinBackoff
	}
	if opts.MaxBackoff > 0 {
		b.maxBackoff = opts.MaxBackoff
	}
	if b.minBackoff > b.maxBackoff {
		return nil, &fence.InvalidError{Field: "backoff", Reason: fmt.Sprintf("MinBackoff %v is above MaxBackoff %v", b.minBackoff, b.maxBackoff)}
	}
	if opts.MaxKeySegmentLen < 0 {
		return nil, &fence.InvalidError{Field: "MaxKeySegmentLen", Reason: fmt.Sprintf("%d is negative", opts.MaxKeySegmentLen)}
	}
	b.maxSegment = opts.MaxKeySegmentLen
	b.unfenced = opts.Unfenced
	return b, nil
}

// Name returns the bucket's name.
func (b *Bucket) Name() string { return b.bucket }

// checkKey validates an object key: S3's limit, and the segment limit when
// one is set.
func (b *Bucket) checkKey(key string) error {
	if err := fence.ValidateKey("key", key, MaxKeyLen); err != nil {
		return err
	}
	if b.maxSegment <= 0 {
		return nil
	}
	for seg := range strings.SplitSeq(key, "/") {
		if len(seg) > b.maxSegment {
			return &fence.InvalidError{Field: "key", Reason: fmt.Sprintf("a segment of %d bytes between slashes, more than MaxKeySegmentLen %d", len(seg), b.maxSegment)}
		}
	}
	return nil
}
