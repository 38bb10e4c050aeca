// Package memory is an in-process fenced store behind *fence.Resource:
// keyed values guarded by the highest token each key has seen, under one
// mutex. It protects goroutines of one process only; it is the embedded
// default for demos and tests, and the reference implementation of the
// resource contract.
//
// Like every backend, it is a driver behind *fence.Resource: the
// portable layer validates keys and tokens, checks the context and wraps
// errors ("fence/memory: put "k": ..."); the driver here keeps only the
// map and its token check. It has no client, so Resource.As gives nothing.
//
// fence.OpenResource opens it from URLs of the form mem:// (a new, empty
// resource on every open) or mem://NAME (the one resource of this process
// named NAME, created on first open: resources opened with one name share
// their values). The URL takes no parameters; an unfenced resource
// (Options.Unfenced) is not offered by URL.
//
// Its name clashes with lockers/memory; alias one on import, for example
// memres "github.com/fencekit/fence/resources/memory".
package memory

import (
	"context"
	"slices"
	"sync"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// MaxKeyLen is the longest key accepted, in bytes.
const MaxKeyLen = 1024

// Options configure New. The zero value is the fenced store.
type Options struct {
	// Unfenced switches the token check off. For control runs only: it
	// accepts every write, whatever its token, so that a test can show
	// that its checker fails when fencing is missing. Highest still
	// returns the highest token accepted. Default: false (fenced).
	Unfenced bool
}

// store is the in-memory driver.
type store struct {
	unfenced bool
	mu       sync.Mutex
	entries  map[string]*entry
}

// entry is the state of one key. It is never removed: a Delete turns it
// into a tombstone that keeps the high-water mark.
type entry struct {
	value   []byte
	token   fence.Token // of the write that stored value
	highest fence.Token // highest accepted, by a Put or a Delete
	deleted bool        // a tombstone, or only claimed: no value
	claimed bool        // only claimed, never written or deleted
}

var _ driver.Resource = (*store)(nil)

// New returns an empty in-memory resource, safe for concurrent use. opts
// may be nil.
func New(opts *Options) *fence.Resource {
	s := &store{entries: make(map[string]*entry)}
	if opts != nil {
		s.unfenced = opts.Unfenced
	}
	r, err := driver.NewResource(s, nil)
	if err != nil {
		panic(err) // the driver's ResourceInfo is constant and valid
	}
	return r
}

// ResourceInfo implements driver.Resource.
func (s *store) ResourceInfo() driver.ResourceInfo {
	return driver.ResourceInfo{Name: "memory", MaxKeyLen: MaxKeyLen}
}

// admit returns the entry of key, created if absent, when a write with
// token may proceed, and a *fence.StaleTokenError otherwise. s.mu is held.
func (s *store) admit(key string, token fence.Token) (*entry, error) {
	e := s.entries[key]
	if e == nil {
		e = &entry{deleted: true}
		s.entries[key] = e
	}
	if token < e.highest && !s.unfenced {
		return nil, &fence.StaleTokenError{Key: key, Token: token, Highest: e.highest}
	}
	e.highest = max(e.highest, token)
	return e, nil
}

// Put implements driver.Resource. It stores a copy of value.
func (s *store) Put(_ context.Context, key string, token fence.Token, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.admit(key, token)
	if err != nil {
		return err
	}
	e.value, e.token, e.deleted, e.claimed = slices.Clone(value), token, false, false
	return nil
}

// Delete implements driver.Resource.
func (s *store) Delete(_ context.Context, key string, token fence.Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.admit(key, token)
	if err != nil {
		return err
	}
	e.value, e.token, e.deleted, e.claimed = nil, token, true, false
	return nil
}

// Get implements driver.Resource. It returns a copy of the value; the
// error for an absent key is a *fence.NotFoundError telling a tombstone
// from a key never written.
func (s *store) Get(_ context.Context, key string) ([]byte, fence.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil || e.deleted {
		return nil, 0, &fence.NotFoundError{Key: key, Tombstone: e != nil && !e.claimed}
	}
	return slices.Clone(e.value), e.token, nil
}

// Claim implements driver.Resource: it raises the entry's highest
// token, and a value's token, and leaves the value or the tombstone as it
// is; a key never written gets an entry that Get still reports as never
// written. Unfenced, it does nothing, as a store without fencing would.
func (s *store) Claim(_ context.Context, key string, token fence.Token) error {
	if s.unfenced {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries[key] == nil {
		s.entries[key] = &entry{deleted: true, claimed: true}
	}
	e, err := s.admit(key, token)
	if err != nil {
		return err
	}
	if !e.deleted {
		e.token = token
	}
	return nil
}

// Highest implements driver.Resource.
func (s *store) Highest(_ context.Context, key string) (fence.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[key]; e != nil {
		return e.highest, nil
	}
	return 0, nil
}
