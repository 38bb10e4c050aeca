// Package faultlock cuts one client off from a lock store in tests: a
// Locker wraps a real *fence.Locker and, while a test says so, fails its
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
	"github.com/fencekit/fence/driver"
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

// Locker stands between one client and the store: the *fence.Locker that
// Locker returns is the wrapped one over a driver whose calls pass a gate,
// which Set opens and closes. Create it with New; it starts Healthy. It is
// safe for concurrent use, and Set may be called while calls are in
// flight: a call already past the gate is not affected.
type Locker struct {
	l    *fence.Locker
	mu   sync.Mutex
	mode Mode
}

// New returns a Healthy Locker in front of l: a new *fence.Locker over
// l's driver (see driver.Wrap), sharing l's store, clock and leases'
// records in the store but not l's waiting lines.
func New(l *fence.Locker) *Locker {
	p := &Locker{}
	fl, err := driver.Wrap(l, func(d driver.Locker) driver.Locker { return &gated{d: d, p: p} })
	if err != nil {
		panic(err) // l's driver was valid, and so is the wrapper
	}
	p.l = fl
	return p
}

// Locker returns the gated *fence.Locker, for a Session.
func (p *Locker) Locker() *fence.Locker { return p.l }

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

// gated is the driver behind the gate. It has every optional capability,
// passing each on to d where d has it: RenewBatch renews one by one over a
// driver without batches, NotifyRelease answers errors.ErrUnsupported
// (the session then polls) over one without notifications, AcquireAll
// answers it (the session then takes the keys one at a time) over one
// without multi-key acquisitions, and Publish (fence.Locker.Publish then
// reports it) over one that keeps no values.
type gated struct {
	d driver.Locker
	p *Locker
}

var (
	_ driver.BatchRenewer    = (*gated)(nil)
	_ driver.ReleaseNotifier = (*gated)(nil)
	_ driver.Publisher       = (*gated)(nil)
	_ driver.MultiAcquirer   = (*gated)(nil)
	_ driver.Creator         = (*gated)(nil)
	_ driver.Aser            = (*gated)(nil)
)

func (g *gated) Info() driver.Info { return g.d.Info() }

func (g *gated) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	if err := g.p.gate(ctx); err != nil {
		return fence.Lease{}, err
	}
	return g.d.Acquire(ctx, key, owner, ttl)
}

func (g *gated) Renew(ctx context.Context, lease fence.Lease) error {
	if err := g.p.gate(ctx); err != nil {
		return err
	}
	return g.d.Renew(ctx, lease)
}

func (g *gated) RenewBatch(ctx context.Context, leases []fence.Lease) []error {
	errs := make([]error, len(leases))
	if err := g.p.gate(ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	if b, ok := g.d.(driver.BatchRenewer); ok {
		return b.RenewBatch(ctx, leases)
	}
	for i, lease := range leases {
		errs[i] = g.d.Renew(ctx, lease)
	}
	return errs
}

func (g *gated) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	n, ok := g.d.(driver.ReleaseNotifier)
	if !ok {
		return nil, nil, errors.ErrUnsupported
	}
	if err := g.p.gate(ctx); err != nil {
		return nil, nil, err
	}
	return n.NotifyRelease(ctx, key)
}

func (g *gated) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	m, ok := g.d.(driver.MultiAcquirer)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	if err := g.p.gate(ctx); err != nil {
		return nil, err
	}
	return m.AcquireAll(ctx, keys, owners, ttl)
}

func (g *gated) Publish(ctx context.Context, lease fence.Lease, value string) error {
	p, ok := g.d.(driver.Publisher)
	if !ok {
		return errors.ErrUnsupported
	}
	if err := g.p.gate(ctx); err != nil {
		return err
	}
	return p.Publish(ctx, lease, value)
}

func (g *gated) Release(ctx context.Context, lease fence.Lease) error {
	if err := g.p.gate(ctx); err != nil {
		return err
	}
	return g.d.Release(ctx, lease)
}

func (g *gated) Break(ctx context.Context, key string) error {
	if err := g.p.gate(ctx); err != nil {
		return err
	}
	return g.d.Break(ctx, key)
}

func (g *gated) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	if err := g.p.gate(ctx); err != nil {
		return fence.LockInfo{}, err
	}
	return g.d.Inspect(ctx, key)
}

func (g *gated) Create(ctx context.Context) error {
	c, ok := g.d.(driver.Creator)
	if !ok {
		return errors.ErrUnsupported
	}
	if err := g.p.gate(ctx); err != nil {
		return err
	}
	return c.Create(ctx)
}

func (g *gated) As(target any) bool {
	a, ok := g.d.(driver.Aser)
	return ok && a.As(target)
}
