package fence

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/fencekit/fence/internal/hook"
)

// resourceDriver is driver.Resource without ResourceInfo, which
// driver.NewResource reads and hands over in a hook.ResourceSpec.
type resourceDriver interface {
	Put(ctx context.Context, key string, token Token, value []byte) error
	Get(ctx context.Context, key string) ([]byte, Token, error)
	Delete(ctx context.Context, key string, token Token) error
	Highest(ctx context.Context, key string) (Token, error)
	Claim(ctx context.Context, key string, token Token) error
}

// Resource is the resource side of fencing: a store of named values in
// which every write carries a token. Get one from a resource backend's
// constructor (s3.New, memory.New, the Resource method of resources/sql's
// Fences, ...) or from OpenResource;
// every backend returns this one type, and passes the conformance suite
// in resources/resourcetest.
//
// A write carrying token t on name is applied only if t >= highest(name),
// and in the same atomic step highest(name) becomes t. Equal tokens pass (one
// holder writes many times). A lower token is refused with an error
// matching ErrStaleToken (a *StaleTokenError carrying both tokens) and
// changes nothing. The check and the write are one conditional operation or
// one transaction. The high-water mark outlives the data: Delete leaves a
// tombstone carrying its token.
//
// Names are checked as lock keys are (non-empty, at most the backend's limit
// in bytes, valid UTF-8, no NUL); a bad name, token 0 or a token above what
// the backend can store gets an error matching ErrInvalid and changes
// nothing. An empty value is a value, not an absence. All methods honour
// ctx: when ctx is done before the store answers, the method returns an
// error wrapping ctx.Err(); such an error is ambiguous (the write may have
// been applied), and a retry with the same token and value is harmless.
// A write whose answer was lost is reconciled by reading the resource back:
// it succeeds if the write is found applied, and when that cannot be settled
// (a higher token has replaced it since) the error matches
// ErrUnknownOutcome, never ErrStaleToken.
//
// A Resource is safe for concurrent use.
type Resource struct {
	d      resourceDriver
	spec   hook.ResourceSpec
	create func(context.Context) error
	as     func(target any) bool
	obs    atomic.Pointer[Observer]
}

// newResource builds the Resource of a driver.NewResource call.
func newResource(s hook.ResourceSpec) (*Resource, error) {
	d, ok := s.Driver.(resourceDriver)
	if !ok || s.Driver == nil {
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("%T is not a driver.Resource", s.Driver)}
	}
	if s.Name == "" || s.MaxKeyLen < 1 {
		return nil, &InvalidError{Field: "driver", Reason: fmt.Sprintf("resource name %q or key limit %d missing", s.Name, s.MaxKeyLen)}
	}
	r := &Resource{d: d, spec: s, create: s.Create}
	if r.create == nil {
		if c, ok := d.(interface{ Create(context.Context) error }); ok {
			r.create = c.Create
		}
	}
	if a, ok := d.(interface{ As(any) bool }); ok {
		r.as = a.As
	}
	return r, nil
}

// Name returns the backend's name, as errors show it ("s3").
func (r *Resource) Name() string { return r.spec.Name }

// As sets target to a backend-specific value under r, if the backend has
// one of target's type, and reports whether it did: the escape hatch to
// the store's own client. Each backend's package lists what As gives.
func (r *Resource) As(target any) bool { return r.as != nil && r.as(target) }

// SetObserver makes o's Call function receive r's store calls. A nil o
// stops them. Set it before use; it is safe to call concurrently with r's
// other methods.
func (r *Resource) SetObserver(o *Observer) { r.obs.Store(o) }

// observed reports whether r's Observer watches its calls.
func (r *Resource) observed() bool {
	o := r.obs.Load()
	return o != nil && o.Call != nil
}

// observe starts the observation of one store call, when r's Observer
// has a Call function.
func (r *Resource) observe(ctx context.Context, op, key string, t Token) (context.Context, func(Token, error)) {
	return observeCall(ctx, r.obs.Load(), Call{Backend: r.spec.Name, Op: op, Key: key, Token: t})
}

// Put stores value under key if token >= highest(key).
func (r *Resource) Put(ctx context.Context, key string, token Token, value []byte) error {
	if !r.observed() {
		return r.put(ctx, key, token, value)
	}
	ctx, end := r.observe(ctx, "put", key, token)
	err := r.put(ctx, key, token, value)
	end(token, err)
	return err
}

func (r *Resource) put(ctx context.Context, key string, token Token, value []byte) error {
	if err := r.check(ctx, key, token); err != nil {
		return r.fail(ctx, "put", key, err)
	}
	if err := r.d.Put(ctx, key, token, value); err != nil {
		return r.fail(ctx, "put", key, err)
	}
	return nil
}

// Get returns the value stored under key and the token of the write
// that stored it. A name never written or deleted (a tombstone) gets an
// error matching ErrNotFound.
func (r *Resource) Get(ctx context.Context, key string) ([]byte, Token, error) {
	if !r.observed() {
		return r.get(ctx, key)
	}
	ctx, end := r.observe(ctx, "get", key, 0)
	value, token, err := r.get(ctx, key)
	end(token, err)
	return value, token, err
}

func (r *Resource) get(ctx context.Context, key string) ([]byte, Token, error) {
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

// Delete removes the value under key if token >= highest(key), leaving a
// tombstone so that highest(key) stays at least token. Deleting an absent
// name is not an error but still records token.
func (r *Resource) Delete(ctx context.Context, key string, token Token) error {
	if !r.observed() {
		return r.delete(ctx, key, token)
	}
	ctx, end := r.observe(ctx, "delete", key, token)
	err := r.delete(ctx, key, token)
	end(token, err)
	return err
}

func (r *Resource) delete(ctx context.Context, key string, token Token) error {
	if err := r.check(ctx, key, token); err != nil {
		return r.fail(ctx, "delete", key, err)
	}
	if err := r.d.Delete(ctx, key, token); err != nil {
		return r.fail(ctx, "delete", key, err)
	}
	return nil
}

// Highest returns the highest token accepted for key, including by a
// Delete or a Claim; 0 if none was.
func (r *Resource) Highest(ctx context.Context, key string) (Token, error) {
	if !r.observed() {
		return r.highest(ctx, key)
	}
	ctx, end := r.observe(ctx, "highest", key, 0)
	t, err := r.highest(ctx, key)
	end(t, err)
	return t, err
}

func (r *Resource) highest(ctx context.Context, key string) (Token, error) {
	if err := r.check(ctx, key, 1); err != nil {
		return 0, r.fail(ctx, "highest", key, err)
	}
	t, err := r.d.Highest(ctx, key)
	if err != nil {
		return 0, r.fail(ctx, "highest", key, err)
	}
	return t, nil
}

// Claim raises highest(key) to token without changing what name
// holds, if token >= highest(key): afterwards Highest returns at
// least token and every write with a lower token is refused. A value
// stays as it was, and Get then returns it with token, as if the
// claimer had written it back (Claim changes Get's token, not the
// value). A key never written or deleted stays so: Get still gets an
// error matching ErrNotFound (a claimed absent key may then read as
// a tombstone in NotFoundError). A lower token is refused like a
// stale Put, with an error matching ErrStaleToken, and changes
// nothing. Claiming again with the current highest token succeeds, so
// a retry after a lost answer is harmless. A read-modify-write that
// claims the key with its token before it reads cannot lose an
// acknowledged write to a stale holder: a write with a lower token
// that was not applied before the claim never will be.
func (r *Resource) Claim(ctx context.Context, key string, token Token) error {
	if !r.observed() {
		return r.claim(ctx, key, token)
	}
	ctx, end := r.observe(ctx, "claim", key, token)
	err := r.claim(ctx, key, token)
	end(token, err)
	return err
}

func (r *Resource) claim(ctx context.Context, key string, token Token) error {
	if err := r.check(ctx, key, token); err != nil {
		return r.fail(ctx, "claim", key, err)
	}
	if err := r.d.Claim(ctx, key, token); err != nil {
		return r.fail(ctx, "claim", key, err)
	}
	return nil
}

func (r *Resource) check(ctx context.Context, key string, token Token) error {
	if err := validateKey("key", key, r.spec.MaxKeyLen); err != nil {
		return err
	}
	if err := validateToken(token); err != nil {
		return err
	}
	if r.spec.MaxToken != 0 && uint64(token) > r.spec.MaxToken {
		return &InvalidError{Field: "token", Reason: fmt.Sprintf("%d is above %d, the highest this backend can store", token, r.spec.MaxToken)}
	}
	return ctx.Err()
}

func (r *Resource) fail(ctx context.Context, op, key string, err error) error {
	return wrapOp(ctx, r.spec.Name, op, key, err)
}

// Create creates what the backend keeps its values in (tables, a bucket)
// if it is missing, where the backend or the URL opener knows how;
// otherwise it returns an error matching errors.ErrUnsupported. What
// exists already is left as it is, and replicas starting together may all
// call it at once: each succeeds.
func (r *Resource) Create(ctx context.Context) error {
	create := r.create
	if create == nil {
		return &OpError{Backend: r.spec.Name, Op: "create", Err: errors.ErrUnsupported}
	}
	if err := create(ctx); err != nil {
		return r.fail(ctx, "create", "", err)
	}
	return nil
}

// Close releases the clients an opener made for r (OpenResource); for a
// Resource built over clients of the caller's, it does nothing.
func (r *Resource) Close() error {
	if r.spec.Close != nil {
		return r.spec.Close()
	}
	return nil
}
