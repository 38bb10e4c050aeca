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
	"github.com/fencekit/fence/internal/fencedobj"
)

// backendName names the backend in errors ("fence/s3: put ...").
const backendName = "s3"

// MaxKeyLen is the longest object key S3 accepts, in bytes of UTF-8. With
// Options.Prefix, the longest key is MaxKeyLen minus the prefix's length.
const MaxKeyLen = 1024

// DefaultMaxBufferedBody is the default of Options.MaxBufferedBody.
const DefaultMaxBufferedBody = 16 << 20

// API is the part of *s3.Client the package calls.
type API interface {
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

// Options configure New. The zero value is the default.
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

// bucket is the driver under the *fence.Resource of New: the conditional
// PUTs and reads of one bucket. PutObject and GetObject reach it through
// native.
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

var (
	_ driver.Resource = (*bucket)(nil)
	_ driver.Aser     = (*bucket)(nil)
)

// New returns a resource writing into bucket through client, typically an
// *s3.Client; it is safe for concurrent use. Its methods (Put, Get,
// Delete, Highest, Claim) take []byte values; PutObject and GetObject
// take it for streamed bodies, metadata and what S3 reports. The bucket
// must exist (the Create of a resource opened by URL makes it); a missing
// one gets an error matching fence.ErrStoreMissing. opts may be nil.
func New(client API, bucketName string, opts *Options) (*fence.Resource, error) {
	return newResource(client, bucketName, opts, nil)
}

// newResource is New, with the options of driver.NewResource.
func newResource(client API, bucketName string, opts *Options, ropts *driver.ResourceOptions) (*fence.Resource, error) {
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
	case o.MaxKeySegmentLen < 0:
		return nil, &fence.InvalidError{Field: "MaxKeySegmentLen", Reason: fmt.Sprintf("%d is negative", o.MaxKeySegmentLen)}
	}
	if o.MaxBufferedBody > 0 {
		b.maxBuffered = o.MaxBufferedBody
	}
	var err error
	if b.backoff, err = fencedobj.NewBackoff(o.MinBackoff, o.MaxBackoff); err != nil {
		return nil, err
	}
	return driver.NewResource(b, ropts)
}

// As implements driver.Aser: a *API target gets the client New was
// given, and an **s3.Client target gets it when it is one.
func (b *bucket) As(target any) bool {
	switch p := target.(type) {
	case *API:
		*p = b.client
		return true
	case **s3.Client:
		c, ok := b.client.(*s3.Client)
		if ok {
			*p = c
		}
		return ok
	}
	return false
}

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

// native returns the bucket under r after checking the input of the
// package's own calls (see fencedobj.Native).
func native(ctx context.Context, r *fence.Resource, key string, token fence.Token, withToken bool) (*bucket, error) {
	return fencedobj.Native[*bucket](ctx, r, "s3.New", key, token, withToken)
}

// fail wraps an error of the package's own calls as the *fence.Resource
// wraps those of its methods.
func fail(ctx context.Context, op, key string, err error) error {
	return fencedobj.Fail(ctx, backendName, op, key, err)
}
