package schedule_test

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fencekit/fence"
)

// errPartitioned is what a partitioned locker's calls fail with: a store
// error whose outcome the caller cannot know.
var errPartitioned = errors.New("injected: network unreachable")

// cut says how a partitioned locker's calls behave.
type cut int

const (
	healthy cut = iota
	// failing calls return errPartitioned at once without reaching the
	// store, like a refused connection.
	failing
	// hanging calls never reach the store and block until their context
	// ends, like packets dropped on the floor.
	hanging
)

// partitionLocker wraps a real locker and cuts one candidate off from it
// while a test says so. It stands between that candidate and the store
// only; the store and the other candidates are untouched.
type partitionLocker struct {
	fence.Locker
	mu    sync.Mutex
	state cut
}

var _ fence.Locker = (*partitionLocker)(nil)

// set switches the partition on (failing or hanging) or off (healthy).
func (p *partitionLocker) set(c cut) {
	p.mu.Lock()
	p.state = c
	p.mu.Unlock()
}

// gate blocks or fails a call while partitioned.
func (p *partitionLocker) gate(ctx context.Context) error {
	p.mu.Lock()
	state := p.state
	p.mu.Unlock()
	switch state {
	case failing:
		return errPartitioned
	case hanging:
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (p *partitionLocker) Acquire(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions) (fence.Lease, error) {
	if err := p.gate(ctx); err != nil {
		return fence.Lease{}, err
	}
	return p.Locker.Acquire(ctx, key, ttl, opts)
}

func (p *partitionLocker) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	if err := p.gate(ctx); err != nil {
		return fence.Lease{}, err
	}
	return p.Locker.Renew(ctx, lease)
}

func (p *partitionLocker) Release(ctx context.Context, lease fence.Lease) error {
	if err := p.gate(ctx); err != nil {
		return err
	}
	return p.Locker.Release(ctx, lease)
}

func (p *partitionLocker) Break(ctx context.Context, key string) error {
	if err := p.gate(ctx); err != nil {
		return err
	}
	return p.Locker.Break(ctx, key)
}

func (p *partitionLocker) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	if err := p.gate(ctx); err != nil {
		return fence.LockInfo{}, err
	}
	return p.Locker.Inspect(ctx, key)
}
