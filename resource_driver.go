package fence

import (
	"context"
	"errors"
	"fmt"
)

// ResourceDriver is what a resource backend implements for the portable
// Resource: its store's conditional writes and reads, nothing else. The
// PortableResource that NewResource builds over it does, once for every
// backend: it validates keys (ValidateKey with the driver's limit) and
// tokens (not 0, at most MaxToken), checks ctx before calling the driver
// and makes sure an error returned after ctx ended wraps ctx.Err(), checks
// what the driver returns (a value read back with token 0 is a
// *CorruptError), and wraps every error in an *OpError. The driver keeps
// what only it can do: the atomic check-and-write, and the read-back that
// settles a write whose answer was lost (see Resource). resourcetest
// certifies a driver: run it on fence.NewResource(driver).
type ResourceDriver interface {
	// ResourceInfo describes the backend and its limits.
	ResourceInfo() ResourceInfo
	// Put, Get, Delete, Highest and Claim are the methods of Resource,
	// called only with a valid key and token.
	Put(ctx context.Context, key string, token Token, value []byte) error
	Get(ctx context.Context, key string) ([]byte, Token, error)
	Delete(ctx context.Context, key string, token Token) error
	Highest(ctx context.Context, key string) (Token, error)
	Claim(ctx context.Context, key string, token Token) error
}

// ResourceInfo describes a resource backend.
type ResourceInfo struct {
	// Name names the backend in errors ("fence/s3: put "k": ...").
	Name string
	// MaxKeyLen is the longest key accepted, in bytes.
	MaxKeyLen int
	// MaxToken is the highest token the backend can store; 0 means no
	// limit below 2^64-1.
	MaxToken Token
}

// PortableResource is the Resource of every backend, over a
// ResourceDriver (see there for what it does). It is safe for concurrent
// use when the driver is.
type PortableResource struct {
	d      ResourceDriver
	info   ResourceInfo
	create func(context.Context) error
	close  func() error
}

var _ Resource = (*PortableResource)(nil)

// NewResource returns the PortableResource over d. It checks d's
// ResourceInfo: a name and a MaxKeyLen of at least 1.
func NewResource(d ResourceDriver) (*PortableResource, error) {
	if d == nil {
		return nil, &InvalidError{Field: "driver", Reason: "nil"}
	}
	info := d.ResourceInfo()
	if info.Name == "" || info.MaxKeyLen < 1 {
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("resource name %q or key limit %d missing", info.Name, info.MaxKeyLen)}
	}
	return &PortableResource{d: d, info: info}, nil
}

// Info returns the backend's name and limits.
func (r *PortableResource) Info() ResourceInfo { return r.info }

// Driver returns the driver under r, for backend-specific calls.
func (r *PortableResource) Driver() ResourceDriver { return r.d }

// Put implements Resource.
func (r *PortableResource) Put(ctx context.Context, key string, token Token, value []byte) error {
	if err := r.check(ctx, key, token); err != nil {
		return r.fail(ctx, "put", key, err)
	}
	if err := r.d.Put(ctx, key, token, value); err != nil {
		return r.fail(ctx, "put", key, err)
	}
	return nil
}

// Get implements Resource.
func (r *PortableResource) Get(ctx context.Context, key string) ([]byte, Token, error) {
	if err := r.check(ctx, key, 1); err != nil {
		return nil, 0, r.fail(ctx, "get", key, err)
	}
	value, token, err := r.d.Get(ctx, key)
	if err != nil {
		return nil, 0, r.fail(ctx, "get", key, err)
	}
	if !token.Valid() {
		return nil, 0, r.fail(ctx, "get", key, &CorruptError{Key: key, Reason: "a value stored with token 0"})
	}
	if value == nil {
		value = []byte{}
	}
	return value, token, nil
}

// Delete implements Resource.
func (r *PortableResource) Delete(ctx context.Context, key string, token Token) error {
	if err := r.check(ctx, key, token); err != nil {
		return r.fail(ctx, "delete", key, err)
	}
	if err := r.d.Delete(ctx, key, token); err != nil {
		return r.fail(ctx, "delete", key, err)
	}
	return nil
}

// Highest implements Resource.
func (r *PortableResource) Highest(ctx context.Context, key string) (Token, error) {
	if err := r.check(ctx, key, 1); err != nil {
		return 0, r.fail(ctx, "highest", key, err)
	}
	t, err := r.d.Highest(ctx, key)
	if err != nil {
		return 0, r.fail(ctx, "highest", key, err)
	}
	return t, nil
}

// Claim implements Resource, with Put's checks of key and token.
func (r *PortableResource) Claim(ctx context.Context, key string, token Token) error {
	if err := r.check(ctx, key, token); err != nil {
		return r.fail(ctx, "claim", key, err)
	}
	if err := r.d.Claim(ctx, key, token); err != nil {
		return r.fail(ctx, "claim", key, err)
	}
	return nil
}

func (r *PortableResource) check(ctx context.Context, key string, token Token) error {
	if err := ValidateKey("key", key, r.info.MaxKeyLen); err != nil {
		return err
	}
	if err := ValidateToken(token); err != nil {
		return err
	}
	if r.info.MaxToken != 0 && token > r.info.MaxToken {
		return &InvalidError{Field: "token", Reason: fmt.Sprintf("%d is above %d, the highest this backend can store", token, r.info.MaxToken)}
	}
	return ctx.Err()
}

func (r *PortableResource) fail(ctx context.Context, op, key string, err error) error {
	return wrapOp(ctx, r.info.Name, op, key, err)
}

// Create creates what the backend keeps its values in (tables, a bucket)
// if it is missing, where the backend or the URL opener knows how;
// otherwise it returns an error matching errors.ErrUnsupported. What
// exists already is left as it is, and replicas starting together may all
// call it at once: each succeeds.
func (r *PortableResource) Create(ctx context.Context) error {
	create := r.create
	if create == nil {
		if c, ok := r.d.(interface{ Create(context.Context) error }); ok {
			create = c.Create
		}
	}
	if create == nil {
		return &OpError{Backend: r.info.Name, Op: "create", Err: errors.ErrUnsupported}
	}
	if err := create(ctx); err != nil {
		return r.fail(ctx, "create", "", err)
	}
	return nil
}

// Close releases the clients an opener made for r (OpenResource); for a
// PortableResource built over clients of the caller's, it does nothing.
func (r *PortableResource) Close() error {
	if r.close != nil {
		return r.close()
	}
	return nil
}
