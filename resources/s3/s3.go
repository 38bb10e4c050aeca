package s3

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
)

// backendName names the backend in errors ("fence/s3: put ...").
const backendName = "s3"

// MaxKeyLen is the longest object key S3 accepts, in bytes of UTF-8. With
// Options.Prefix, the longest key is MaxKeyLen minus the prefix's length
// (Resource.Info().MaxKeyLen).
const MaxKeyLen = 1024

// DefaultMaxBufferedBody is the default of Options.MaxBufferedBody.
const DefaultMaxBufferedBody = 16 << 20

// API is the part of *s3.Client the package calls.
type API interface {
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

// Options configure a Resource. The zero value is the default.
type Options struct {
	// Prefix is put before every key to name its object, for example
	// "reports/" (a key "acme.csv" is then the object
	// "reports/acme.csv"). Errors name the key, without the prefix. At
	// most MaxKeyLen-1 bytes of UTF-8. Default: none.
	Prefix string
	// MaxBufferedBody is the largest body, in bytes, that PutObject reads
	// into memory when the body is not an io.ReadSeeker (seekable bodies
	// are streamed whatever their size). Default: DefaultMaxBufferedBody
	// (16 MiB).
	MaxBufferedBody int64
	// MinBackoff and MaxBackoff bound the jittered, doubling pause before
	// a write reads the object again after losing a race. Defaults: 10ms
	// and 1s.
	MinBackoff, MaxBackoff time.Duration
	// MaxKeySegmentLen, when positive, is the longest part of an object
	// name (prefix and key) between slashes, in bytes; longer keys are
	// refused with fence.ErrInvalid. S3 has no such limit (default 0:
	// none), but MinIO keeps objects in a file system and refuses keys
	// with a segment longer than 255 bytes: set 255 for MinIO.
	MaxKeySegmentLen int
	// Unfenced switches the token check and the PUT conditions off. For
	// control runs only: every write is applied, whatever its token, so a
	// test can show that its checker fails when fencing is missing. The
	// token is still recorded. Default: false (fenced).
	Unfenced bool
}

// Resource fences the objects of one S3 bucket. The embedded
// *fence.Resource is its fence.Resource (Put, Get, Delete,
// Highest with []byte values, keys checked and errors wrapped there);
// PutObject, GetObject and DeleteObject are the native API, with streamed
// bodies, metadata and what S3 reports. Create it with New, or open it
// from an s3:// URL (see URLOpener). It is safe for concurrent use.
type Resource struct {
	*fence.Resource
	b *bucket
}

var _ fence.Resource = (*Resource)(nil)

// bucket is the driver under a Resource: the conditional PUTs and reads
// of one bucket.
type bucket struct {
	client      API
	name        string
	prefix      string
	maxBuffered int64
	backoff     backoff.Policy
	maxSegment  int
	unfenced    bool
	// seen is set once the bucket is known to exist: HeadObject answers
	// 404 to a missing key and a missing bucket alike, so until then a
	// 404 is checked (see absent).
	seen atomic.Bool
}

var _ driver.Resource = (*bucket)(nil)

// New returns a Resource writing into bucket through client, typically an
// *s3.Client. The bucket must exist (URLOpener's Create makes it); a
// missing one gets an error matching fence.ErrStoreMissing. opts may be
// nil.
func New(client API, bucketName string, opts *Options) (*Resource, error) {
	if client == nil {
		return nil, &fence.InvalidError{Field: "client", Reason: "nil"}
	}
	if bucketName == "" {
		return nil, &fence.InvalidError{Field: "bucket", Reason: "empty"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	b := &bucket{
		client:      client,
		name:        bucketName,
		prefix:      o.Prefix,
		maxBuffered: DefaultMaxBufferedBody,
		backoff:     backoff.Policy{First: 10 * time.Millisecond, Max: time.Second},
		maxSegment:  o.MaxKeySegmentLen,
		unfenced:    o.Unfenced,
	}
	switch {
	case len(o.Prefix) >= MaxKeyLen:
		return nil, &fence.InvalidError{Field: "Prefix", Reason: fmt.Sprintf("%d bytes leaves no room for a key in an object key of at most %d", len(o.Prefix), MaxKeyLen)}
	case !utf8.ValidString(o.Prefix):
		return nil, &fence.InvalidError{Field: "Prefix", Reason: "not valid UTF-8"}
	case o.MaxBufferedBody < 0:
		return nil, &fence.InvalidError{Field: "MaxBufferedBody", Reason: fmt.Sprintf("%d is negative", o.MaxBufferedBody)}
	case o.MinBackoff < 0 || o.MaxBackoff < 0:
		return nil, &fence.InvalidError{Field: "backoff", Reason: "negative"}
	case o.MaxKeySegmentLen < 0:
		return nil, &fence.InvalidError{Field: "MaxKeySegmentLen", Reason: fmt.Sprintf("%d is negative", o.MaxKeySegmentLen)}
	}
	if o.MaxBufferedBody > 0 {
		b.maxBuffered = o.MaxBufferedBody
	}
	if o.MinBackoff > 0 {
		b.backoff.First = o.MinBackoff
	}
	if o.MaxBackoff > 0 {
		b.backoff.Max = o.MaxBackoff
	}
	if b.backoff.First > b.backoff.Max {
		return nil, &fence.InvalidError{Field: "backoff", Reason: fmt.Sprintf("MinBackoff %v is above MaxBackoff %v", b.backoff.First, b.backoff.Max)}
	}
	pr, err := driver.NewResource(b)
	if err != nil {
		return nil, err
	}
	return &Resource{PortableResource: pr, b: b}, nil
}

// BucketName returns the bucket's name.
func (r *Resource) BucketName() string { return r.b.name }

// ResourceInfo implements driver.Resource.
func (b *bucket) ResourceInfo() driver.ResourceInfo {
	return driver.ResourceInfo{Name: backendName, MaxKeyLen: MaxKeyLen - len(b.prefix)}
}

// objectKey returns the object key of key, prefix + key, after the
// segment limit, the one rule of the store that the portable layer's
// checks do not cover.
func (b *bucket) objectKey(key string) (string, error) {
	name := b.prefix + key
	if b.maxSegment <= 0 {
		return name, nil
	}
	for seg := range strings.SplitSeq(name, "/") {
		if len(seg) > b.maxSegment {
			return "", &fence.InvalidError{Field: "key", Reason: fmt.Sprintf("a segment of %d bytes between slashes, more than MaxKeySegmentLen %d", len(seg), b.maxSegment)}
		}
	}
	return name, nil
}

// native checks the input of a native method, as the PortableResource
// does for Put, Get, Delete and Highest: the key, the token unless it is
// 0 for a read (withToken false), and ctx.
func (r *Resource) native(ctx context.Context, key string, token fence.Token, withToken bool) error {
	if err := driver.ValidateKey("key", key, MaxKeyLen-len(r.b.prefix)); err != nil {
		return err
	}
	if withToken {
		if err := driver.ValidateToken(token); err != nil {
			return err
		}
	}
	return ctxErr(ctx)
}

// fail wraps an error of a native method as the PortableResource wraps
// those of the portable ones.
func fail(ctx context.Context, op, key string, err error) error {
	return &fence.OpError{Backend: backendName, Op: op, Key: key, Err: withCtx(ctx, err)}
}
