package driver

import (
	"context"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/hook"
)

// Resource is what a resource backend implements: its store's conditional
// writes and reads, nothing else. The *fence.Resource that NewResource
// builds over it does, once for every backend: it validates keys
// (ValidateKey with the driver's limit) and tokens (not 0, at most
// MaxToken), checks ctx before calling the driver and makes sure an error
// returned after ctx ended wraps ctx.Err(), checks what the driver returns
// (a value read back with token 0 is a *fence.CorruptError), and wraps
// every error in a *fence.OpError. The driver keeps what only it can do:
// the atomic check-and-write, and the read-back that settles a write whose
// answer was lost (see fence.Resource).
type Resource interface {
	// ResourceInfo describes the backend and its limits. It is read
	// once, by NewResource.
	ResourceInfo() ResourceInfo
	// Put, Get, Delete, Highest and Claim are the methods of
	// fence.Resource, called only with a valid key and token.
	Put(ctx context.Context, key string, token fence.Token, value []byte) error
	Get(ctx context.Context, key string) ([]byte, fence.Token, error)
	Delete(ctx context.Context, key string, token fence.Token) error
	Highest(ctx context.Context, key string) (fence.Token, error)
	Claim(ctx context.Context, key string, token fence.Token) error
}

// ResourceInfo describes a resource backend.
type ResourceInfo struct {
	// Name names the backend in errors ("fence/s3: put "k": ...").
	Name string
	// MaxKeyLen is the longest key accepted, in bytes.
	MaxKeyLen int
	// MaxToken is the highest token the backend can store; 0 means no
	// limit below 2^64-1.
	MaxToken fence.Token
}

// ResourceOptions are the optional settings of NewResource. A nil
// *ResourceOptions means all defaults.
type ResourceOptions struct {
	// Create creates the store's tables or bucket, for
	// fence.Resource.Create, when the driver is no Creator. Default: the
	// driver's Create, if any.
	Create func(ctx context.Context) error
	// Close releases the clients a URL opener made, for
	// fence.Resource.Close. Default: nothing to close.
	Close func() error
}

// NewResource returns the portable *fence.Resource over d. It checks d's
// ResourceInfo: a name and a MaxKeyLen of at least 1.
func NewResource(d Resource, opts *ResourceOptions) (*fence.Resource, error) {
	if d == nil {
		return nil, &fence.InvalidError{Field: "driver", Reason: "nil"}
	}
	if opts == nil {
		opts = &ResourceOptions{}
	}
	info := d.ResourceInfo()
	r, err := hook.NewResource(hook.ResourceSpec{
		Driver: d, Name: info.Name, MaxKeyLen: info.MaxKeyLen, MaxToken: uint64(info.MaxToken),
		Create: opts.Create, Close: opts.Close,
	})
	if err != nil {
		return nil, err
	}
	return r.(*fence.Resource), nil
}

// ResourceOf returns the driver under r, for a backend's package
// functions that reach past the portable type (a streaming upload), and
// for the project's tools.
func ResourceOf(r *fence.Resource) Resource { return hook.Resource(r).Driver.(Resource) }
