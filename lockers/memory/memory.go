// Package memory is an in-process fence.Locker. Leases are timed by an
// injected fence.Clock, so tests can expire them without sleeping. It
// protects goroutines of one process only; it is the embedded default for
// demos and tests, and the reference implementation of the contract.
//
// Its records live in the Locker's memory, one per key ever acquired: the
// owner of the last lease, the last token issued, whether the lease is
// held and its ValidUntil on the Locker's Clock, as Inspect reports them.
// Nothing is stored anywhere else: a new Locker (a restarted process)
// starts every key's tokens at 1 again, so fence only resources that live
// no longer than the Locker with it.
package memory

import (
	"context"
	"sync"
	"time"

	"github.com/fencekit/fence"
)

// Limits of the memory locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes.
	MaxKeyLen = 1024
	// MinTTL and MaxTTL bound the lease duration.
	MinTTL = time.Millisecond
	MaxTTL = 24 * time.Hour
)

// Options configure a Locker. The zero value is usable.
type Options struct {
	// Clock measures expiry. Default: fence.SystemClock.
	Clock fence.Clock
}

// Locker is an in-memory fence.Locker. Create it with New.
type Locker struct {
	clock fence.Clock
	mu    sync.Mutex
	keys  map[string]*record
}

type record struct {
	owner      string
	token      fence.Token
	held       bool
	validUntil time.Time
}

var _ fence.Locker = (*Locker)(nil)

// New returns an empty Locker. opts may be nil.
func New(opts *Options) *Locker {
	var c fence.Clock
	if opts != nil {
		c = opts.Clock
	}
	return &Locker{clock: fence.ClockOrSystem(c), keys: make(map[string]*record)}
}

func (l *Locker) live(r *record, now time.Time) bool {
	return r != nil && r.held && now.Before(r.validUntil)
}

// Acquire implements fence.Locker.
func (l *Locker) Acquire(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions) (fence.Lease, error) {
	if err := fence.ValidateKey("key", key, MaxKeyLen); err != nil {
		return fence.Lease{}, err
	}
	if err := fence.ValidateTTL(ttl, MinTTL, MaxTTL); err != nil {
		return fence.Lease{}, err
	}
	if err := ctx.Err(); err != nil {
		return fence.Lease{}, err
	}
	owner := opts.OwnerOrNew()
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	r := l.keys[key]
	if l.live(r, now) {
		return fence.Lease{}, &fence.HeldError{Key: key, Owner: r.owner, Token: r.token, ValidUntil: r.validUntil}
	}
	if r == nil {
		r = &record{}
		l.keys[key] = r
	}
	r.token++
	r.owner, r.held, r.validUntil = owner, true, now.Add(ttl)
	return fence.Lease{Key: key, Owner: owner, Token: r.token, TTL: ttl, ValidUntil: r.validUntil}, nil
}

// Renew implements fence.Locker.
func (l *Locker) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	if err := fence.ValidateLease(lease, MaxKeyLen); err != nil {
		return fence.Lease{}, err
	}
	if err := fence.ValidateTTL(lease.TTL, MinTTL, MaxTTL); err != nil {
		return fence.Lease{}, err
	}
	if err := ctx.Err(); err != nil {
		return fence.Lease{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	r := l.keys[lease.Key]
	if !l.live(r, now) || r.owner != lease.Owner || r.token != lease.Token {
		return fence.Lease{}, fence.ErrNotHeld
	}
	r.validUntil = now.Add(lease.TTL)
	lease.ValidUntil = r.validUntil
	return lease, nil
}

// Release implements fence.Locker.
func (l *Locker) Release(ctx context.Context, lease fence.Lease) error {
	if err := fence.ValidateLease(lease, MaxKeyLen); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.keys[lease.Key]
	if !l.live(r, l.clock.Now()) || r.owner != lease.Owner || r.token != lease.Token {
		return fence.ErrNotHeld
	}
	r.held = false
	return nil
}

// Break implements fence.Locker. The counter is kept, so the next token is
// higher than the broken holder's.
func (l *Locker) Break(ctx context.Context, key string) error {
	if err := fence.ValidateKey("key", key, MaxKeyLen); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.keys[key]; r != nil {
		r.held = false
	}
	return nil
}

// Inspect implements fence.Locker.
func (l *Locker) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	if err := fence.ValidateKey("key", key, MaxKeyLen); err != nil {
		return fence.LockInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return fence.LockInfo{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.keys[key]
	if r == nil {
		return fence.LockInfo{Key: key}, nil
	}
	info := fence.LockInfo{Key: key, Owner: r.owner, Token: r.token}
	if l.live(r, l.clock.Now()) {
		info.Held, info.ValidUntil = true, r.validUntil
	}
	return info, nil
}
