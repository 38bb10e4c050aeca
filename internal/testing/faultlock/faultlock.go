// Package faultlock cuts one client off from a lock store in tests: a
// Locker wraps a real fence.Locker and, while a test says so, fails its
// calls at once or lets them hang, without reaching the store. The store
// and its other clients are untouched, so a test can partition one
// replica (a candidate of an election, a replica of a scheduled job) from
// the others.
package faultlock

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/fencekit/fence"
)

// ErrPartitioned is what the calls of a Failing Locker return: a store
// error whose outcome the caller cannot know.
var ErrPartitioned = errors.New("faultlock: injected: network unreachable")

// Mode says how a Locker's calls behave.
type Mode int

const (
	// Healthy calls go to the wrapped Locker.
	Healthy Mode = iota
	// Failing calls return ErrPartitioned at once without reaching the
	// store, like a refused connection.
	Failing
	// Hanging calls never reach the store and block until their context
	// ends, then return the context's error, like packets dropped on the
	// floor.
	Hanging
)

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case Healthy:
		return "healthy"
	case Failing:
		return "failing"
	case Hanging:
		return "hanging"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Locker wraps a fence.Locker and stands between one client and the
// store. Create it with New; it starts Healthy. It is safe for concurrent
// use, and Set may be called while calls are in flight: a call already
// past the gate is not affected.
type Locker struct {
	fence.Locker
	mu   sync.Mutex
	mode Mode
}

var _ fence.Locker = (*Locker)(nil)

// New returns a Healthy Locker in front of l.
func New(l fence.Locker) *Locker { return &Locker{Locker: l} }

// Set switches the partition on (Failing or Hanging) or off (Healthy).
func (p *Locker) Set(m Mode) {
	p.mu.Lock()
	p.mode = m
	p.mu.Unlock()
}

// gate blocks or fails a call while partitioned.
func (p *Locker) gate(ctx context.Context) error {
	p.mu.Lock()
	mode := p.mode
	p.mu.Unlock()
	switch mode {
	case Failing:
		return ErrPartitioned
	case Hanging:
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// Acquire calls the wrapped Acquire unless partitioned.
func (p *Locker) Acquire(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions) (fence.Lease, error) {
	if err := p.gate(ctx); err != nil {
		return fence.Lease{}, err
	}
	return p.Locker.Acquire(ctx, key, ttl, opts)
}

// Renew calls the wrapped Renew unless partitioned.
func (p *Locker) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	if err := p.gate(ctx); err != nil {
		return fence.Lease{}, err
	}
	return p.Locker.Renew(ctx, lease)
}

// Release calls the wrapped Release unless partitioned.
func (p *Locker) Release(ctx context.Context, lease fence.Lease) error {
	if err := p.gate(ctx); err != nil {
		return err
	}
	return p.Locker.Release(ctx, lease)
}

// Break calls the wrapped Break unless partitioned.
func (p *Locker) Break(ctx context.Context, key string) error {
	if err := p.gate(ctx); err != nil {
		return err
	}
	return p.Locker.Break(ctx, key)
}

// Inspect calls the wrapped Inspect unless partitioned.
func (p *Locker) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	if err := p.gate(ctx); err != nil {
		return fence.LockInfo{}, err
	}
	return p.Locker.Inspect(ctx, key)
}
