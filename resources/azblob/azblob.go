package azblob

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/azblobconn"
	"github.com/fencekit/fence/internal/backoff"
	"github.com/fencekit/fence/internal/fencedobj"
)

// backendName names the backend in errors ("fence/azblob: put ...").
const backendName = "azblob"

// Limits of the package.
const (
	// MaxKeyLen is the longest blob name accepted, in bytes of UTF-8.
	// Azure allows 1,024 characters; 1,024 bytes are never more. With
	// Options.Prefix, the longest key is MaxKeyLen less the prefix.
	MaxKeyLen = 1024
	// MaxPutBlobSize is the largest body Azure accepts in one Put Blob
	// request (5000 MiB); Options.MaxSinglePut may not exceed it.
	MaxPutBlobSize = 5000 << 20
	// MaxBlockSize is the largest block Azure accepts in one Put Block
	// request (4000 MiB).
	MaxBlockSize = 4000 << 20
	// maxBlocks is the most blocks one block blob can hold.
	maxBlocks = 50_000
	// maxSegments is the largest number of '/'-separated segments in a
	// blob name.
	maxSegments = 254
)

// Defaults of Options.
const (
	// DefaultMaxBufferedBody is the default of Options.MaxBufferedBody.
	DefaultMaxBufferedBody = 16 << 20
	// DefaultMaxSinglePut is the default of Options.MaxSinglePut.
	DefaultMaxSinglePut = 256 << 20
	// DefaultBlockSize is the default of Options.BlockSize.
	DefaultBlockSize = 8 << 20
)

// Options configure New. A nil *Options means all defaults.
type Options struct {
	// Prefix is put before every key to name its blob, for example
	// "reports/" (a key "acme.csv" is then the blob "reports/acme.csv").
	// Errors name the key, without the prefix. At most MaxKeyLen-1 bytes
	// of UTF-8. Default: none.
	Prefix string
	// MaxBufferedBody is the largest body, in bytes, that PutBlob reads
	// into memory when the body is not an io.ReadSeeker (seekable bodies
	// are streamed whatever their size).
	// Default: DefaultMaxBufferedBody (16 MiB).
	MaxBufferedBody int64
	// MaxSinglePut is the largest body sent in one Put Blob request; a
	// longer one is sent as staged blocks of BlockSize bytes and committed
	// by one conditional Put Block List. At most MaxPutBlobSize. Default:
	// DefaultMaxSinglePut (256 MiB).
	MaxSinglePut int64
	// BlockSize is the size of the staged blocks of a body longer than
	// MaxSinglePut. At most MaxBlockSize. Default: DefaultBlockSize
	// (8 MiB).
	BlockSize int64
	// MinBackoff and MaxBackoff bound the jittered, doubling pause before
	// a write reads the blob again after losing a race. Defaults: 10ms
	// and 1s.
	MinBackoff, MaxBackoff time.Duration
	// Unfenced switches the token check and the write conditions off. For
	// control runs only: every write is applied, whatever its token, so a
	// test can show that its checker fails when fencing is missing. The
	// token is still recorded. Default: false (fenced).
	Unfenced bool
}

// store is the driver under the *fence.Resource of New: the conditional
// writes and reads of one container. PutBlob and GetBlob reach it
// through native.
type store struct {
	c           *container.Client
	prefix      string
	maxBuffered int64
	singlePut   int64
	blockSize   int64
	backoff     backoff.Policy
	unfenced    bool
}

var (
	_ driver.Resource = (*store)(nil)
	_ driver.Aser     = (*store)(nil)
	_ driver.Creator  = (*store)(nil)
)

// New returns a resource writing blobs into the container of c; it is
// safe for concurrent use. Its methods (Put, Get, Delete, Highest, Claim)
// take []byte values; PutBlob and GetBlob take it for streamed bodies,
// metadata and what Azure reports. The container must exist (the
// resource's Create makes it); a missing one gets an error matching
// fence.ErrStoreMissing. opts may be nil.
//
// It takes the SDK's *container.Client, as lockers/azblob does: the SDK
// builds its blob clients from it, and a narrower interface would have
// to re-declare them. The client's retry policy serves reads; every
// conditional write is sent once (see "Lost answers" in the package doc).
func New(c *container.Client, opts *Options) (*fence.Resource, error) {
	return newResource(c, opts, nil)
}

// newResource is New, with the options of driver.NewResource.
func newResource(c *container.Client, opts *Options, ropts *driver.ResourceOptions) (*fence.Resource, error) {
	if c == nil {
		return nil, &fence.InvalidError{Field: "client", Reason: "nil"}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &store{
		c:           c,
		prefix:      o.Prefix,
		maxBuffered: DefaultMaxBufferedBody,
		singlePut:   DefaultMaxSinglePut,
		blockSize:   DefaultBlockSize,
		unfenced:    o.Unfenced,
	}
	switch {
	case len(o.Prefix) >= MaxKeyLen:
		return nil, &fence.InvalidError{Field: "Prefix", Reason: fmt.Sprintf("%d bytes leaves no room for a key in a blob name of at most %d", len(o.Prefix), MaxKeyLen)}
	case !utf8.ValidString(o.Prefix):
		return nil, &fence.InvalidError{Field: "Prefix", Reason: "not valid UTF-8"}
	case o.MaxBufferedBody < 0:
		return nil, &fence.InvalidError{Field: "MaxBufferedBody", Reason: fmt.Sprintf("%d is negative", o.MaxBufferedBody)}
	case o.MaxSinglePut < 0 || o.MaxSinglePut > MaxPutBlobSize:
		return nil, &fence.InvalidError{Field: "MaxSinglePut", Reason: fmt.Sprintf("%d is not from 0 to %d", o.MaxSinglePut, MaxPutBlobSize)}
	case o.BlockSize < 0 || o.BlockSize > MaxBlockSize:
		return nil, &fence.InvalidError{Field: "BlockSize", Reason: fmt.Sprintf("%d is not from 0 to %d", o.BlockSize, MaxBlockSize)}
	}
	if o.MaxBufferedBody > 0 {
		s.maxBuffered = o.MaxBufferedBody
	}
	if o.MaxSinglePut > 0 {
		s.singlePut = o.MaxSinglePut
	}
	if o.BlockSize > 0 {
		s.blockSize = o.BlockSize
	}
	var err error
	if s.backoff, err = fencedobj.NewBackoff(o.MinBackoff, o.MaxBackoff); err != nil {
		return nil, err
	}
	return driver.NewResource(s, ropts)
}

// As implements driver.Aser: a **container.Client target gets the client
// New was given.
func (s *store) As(target any) bool {
	if p, ok := target.(**container.Client); ok {
		*p = s.c
		return true
	}
	return false
}

// ResourceInfo implements driver.Resource.
func (s *store) ResourceInfo() driver.ResourceInfo {
	return driver.ResourceInfo{Name: backendName, MaxKeyLen: MaxKeyLen - len(s.prefix)}
}

// Create implements driver.Creator: it creates the container, and
// succeeds when it exists already.
func (s *store) Create(ctx context.Context) error {
	_, err := s.c.Create(ctx, nil)
	if err != nil && isCode(err, "ContainerAlreadyExists") {
		return nil
	}
	return azblobconn.OneLine(err)
}

// blobOf returns the blob name of key: prefix + key, escaped where
// Azure would change it (see blobName).
func (s *store) blobOf(key string) (string, error) {
	return blobName("key", s.prefix+key)
}

// native returns the store under r after checking the input of the
// package's own calls (see fencedobj.Native).
func native(ctx context.Context, r *fence.Resource, key string, token fence.Token, withToken bool) (*store, error) {
	return fencedobj.Native[*store](ctx, r, "azblob.New", key, token, withToken)
}

// fail wraps an error of the package's own calls as the *fence.Resource
// wraps those of its methods.
func fail(ctx context.Context, op, key string, err error) error {
	return fencedobj.Fail(ctx, backendName, op, key, err)
}
