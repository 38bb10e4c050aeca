// Package memory is an in-process fenced store implementing fence.Resource:
// named values guarded by the highest token each name has seen, under one
// mutex. It protects goroutines of one process only; it is the embedded
// default for demos and tests, and the reference implementation of the
// resource contract.
//
// Its name clashes with lockers/memory; alias one on import, for example
// memres "github.com/fencekit/fence/resources/memory".
package memory

import (
	"context"
	"slices"
	"sync"

	"github.com/fencekit/fence"
)

// MaxKeyLen is the longest name accepted, in bytes.
const MaxKeyLen = 1024

// Options configure a Resource. The zero value is the fenced store.
type Options struct {
	// Unfenced switches the token check off. For control runs only: it
	// accepts every write, whatever its token, so that a test can show
	// that its checker fails when fencing is missing. Highest still
	// returns the highest token accepted. Default: false (fenced).
	Unfenced bool
}

// Resource is an in-memory fence.Resource, safe for concurrent use.
// Create it with New.
type Resource struct {
	unfenced bool
	mu       sync.Mutex
	entries  map[string]*entry
}

// entry is the state of one name. It is never removed: a Delete turns it
// into a tombstone that keeps the high-water mark.
type entry struct {
	value   []byte
	token   fence.Token // of the write that stored value
	highest fence.Token // highest accepted, by a Put or a Delete
	deleted bool        // a tombstone: no value
}

var _ fence.Resource = (*Resource)(nil)

// New returns an empty Resource. opts may be nil.
func New(opts *Options) *Resource {
	r := &Resource{entries: make(map[string]*entry)}
	if opts != nil {
		r.unfenced = opts.Unfenced
	}
	return r
}

// check validates a write's input and the context.
func check(ctx context.Context, name string, token fence.Token) error {
	if err := fence.ValidateKey("name", name, MaxKeyLen); err != nil {
		return err
	}
	if err := fence.ValidateToken(token); err != nil {
		return err
	}
	return ctx.Err()
}

// admit returns the entry of name, created if absent, when a write with
// token may proceed, and a *fence.StaleTokenError otherwise. r.mu is held.
func (r *Resource) admit(name string, token fence.Token) (*entry, error) {
	e := r.entries[name]
	if e == nil {
		e = &entry{deleted: true}
		r.entries[name] = e
	}
	if token < e.highest && !r.unfenced {
		return nil, &fence.StaleTokenError{Key: name, Token: token, Highest: e.highest}
	}
	e.highest = max(e.highest, token)
	return e, nil
}

// Put implements fence.Resource. It stores a copy of value.
func (r *Resource) Put(ctx context.Context, name string, token fence.Token, value []byte) error {
	if err := check(ctx, name, token); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.admit(name, token)
	if err != nil {
		return err
	}
	e.value, e.token, e.deleted = slices.Clone(value), token, false
	return nil
}

// Delete implements fence.Resource.
func (r *Resource) Delete(ctx context.Context, name string, token fence.Token) error {
	if err := check(ctx, name, token); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.admit(name, token)
	if err != nil {
		return err
	}
	e.value, e.token, e.deleted = nil, token, true
	return nil
}

// Get implements fence.Resource. It returns a copy of the value; the error
// for an absent name is a *fence.NotFoundError telling a tombstone from a
// name never written.
func (r *Resource) Get(ctx context.Context, name string) ([]byte, fence.Token, error) {
	if err := fence.ValidateKey("name", name, MaxKeyLen); err != nil {
		return nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entries[name]
	if e == nil || e.deleted {
		return nil, 0, &fence.NotFoundError{Key: name, Tombstone: e != nil}
	}
	v := slices.Clone(e.value)
	if v == nil {
		v = []byte{}
	}
	return v, e.token, nil
}

// Highest implements fence.Resource.
func (r *Resource) Highest(ctx context.Context, name string) (fence.Token, error) {
	if err := fence.ValidateKey("name", name, MaxKeyLen); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.entries[name]; e != nil {
		return e.highest, nil
	}
	return 0, nil
}
