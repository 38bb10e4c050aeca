// Package memory is an in-process locker. Leases are timed by an
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
	"fmt"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/notify"
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

// store is the in-memory driver: one record per key ever acquired.
type store struct {
	clock fence.Clock
	mu    sync.Mutex
	keys  map[string]*record
	hub   notify.Hub // waiters of Session.Lock, woken on release and break
}

type record struct {
	owner      string
	token      fence.Token
	held       bool
	validUntil time.Time
	value      string // published with the lease
}

var (
	_ driver.Locker          = (*store)(nil)
	_ driver.ReleaseNotifier = (*store)(nil)
	_ driver.Publisher       = (*store)(nil)
	_ driver.MultiAcquirer   = (*store)(nil)
)

// New returns an empty in-memory Locker. opts may be nil.
func New(opts *Options) *fence.Locker {
	var c fence.Clock
	if opts != nil {
		c = opts.Clock
	}
	c = driver.ClockOrSystem(c)
	l, err := driver.NewLocker(&store{clock: c, keys: make(map[string]*record)}, &driver.LockerOptions{Clock: c})
	if err != nil {
		panic(err) // the driver's Info is constant and valid
	}
	return l
}

// Info implements driver.Locker.
func (s *store) Info() driver.Info {
	return driver.Info{Name: "memory", MaxKeyLen: MaxKeyLen, MinTTL: MinTTL, MaxTTL: MaxTTL, InProcess: true}
}

func (s *store) live(r *record, now time.Time) bool {
	return r != nil && r.held && now.Before(r.validUntil)
}

// held returns nil if r is lease's live record at now, and a
// *fence.NotHeldError saying why not otherwise.
func (s *store) held(r *record, lease fence.Lease, now time.Time) error {
	why := ""
	switch {
	case r == nil:
		why = "the key was never acquired"
	case r.token != lease.Token || r.owner != lease.Owner:
		why = fmt.Sprintf("token %d has been issued since", r.token)
	case !r.held:
		why = "released or broken"
	case !now.Before(r.validUntil):
		why = "expired"
	default:
		return nil
	}
	return &fence.NotHeldError{Key: lease.Key, Reason: why}
}

// Acquire implements driver.Locker.
func (s *store) Acquire(_ context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	r := s.keys[key]
	if s.live(r, now) {
		return fence.Lease{}, &fence.HeldError{Key: key, Owner: r.owner, Token: r.token, ValidUntil: r.validUntil}
	}
	return s.take(key, r, owner, ttl, now), nil
}

// take gives key, whose record r (nil if new) is free, to owner.
func (s *store) take(key string, r *record, owner string, ttl time.Duration, now time.Time) fence.Lease {
	if r == nil {
		r = &record{}
		s.keys[key] = r
	}
	r.token++
	r.owner, r.held, r.validUntil, r.value = owner, true, now.Add(ttl), ""
	return fence.Lease{Key: key, Owner: owner, Token: r.token, TTL: ttl, ValidUntil: r.validUntil}
}

// AcquireAll implements driver.MultiAcquirer: under one lock of the
// store, every key is taken or none.
func (s *store) AcquireAll(_ context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for _, key := range keys {
		if r := s.keys[key]; s.live(r, now) {
			return nil, &fence.HeldError{Key: key, Owner: r.owner, Token: r.token, ValidUntil: r.validUntil}
		}
	}
	leases := make([]fence.Lease, len(keys))
	for i, key := range keys {
		leases[i] = s.take(key, s.keys[key], owners[i], ttl, now)
	}
	return leases, nil
}

// Publish implements driver.Publisher.
func (s *store) Publish(_ context.Context, lease fence.Lease, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.keys[lease.Key]
	if err := s.held(r, lease, s.clock.Now()); err != nil {
		return err
	}
	r.value = value
	s.hub.Signal(lease.Key)
	return nil
}

// Renew implements driver.Locker.
func (s *store) Renew(_ context.Context, lease fence.Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	r := s.keys[lease.Key]
	if err := s.held(r, lease, now); err != nil {
		return err
	}
	r.validUntil = now.Add(lease.TTL)
	return nil
}

// Release implements driver.Locker.
func (s *store) Release(_ context.Context, lease fence.Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.keys[lease.Key]
	if err := s.held(r, lease, s.clock.Now()); err != nil {
		return err
	}
	r.held, r.value = false, ""
	s.hub.Signal(lease.Key)
	return nil
}

// Break implements driver.Locker. The counter is kept, so the next
// token is higher than the broken holder's.
func (s *store) Break(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.keys[key]; r != nil && r.held {
		r.held, r.value = false, ""
		s.hub.Signal(key)
	}
	return nil
}

// NotifyRelease implements driver.ReleaseNotifier: a blocked Session.Lock
// wakes as soon as the key is released, broken or published.
func (s *store) NotifyRelease(_ context.Context, key string) (<-chan struct{}, func(), error) {
	c, stop := s.hub.Subscribe(key)
	return c, stop, nil
}

// Inspect implements driver.Locker.
func (s *store) Inspect(_ context.Context, key string) (fence.LockInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.keys[key]
	if r == nil {
		return fence.LockInfo{Key: key}, nil
	}
	info := fence.LockInfo{Key: key, Owner: r.owner, Token: r.token}
	if s.live(r, s.clock.Now()) {
		info.Held, info.ValidUntil = true, r.validUntil
		info.Value = r.value
	}
	return info, nil
}
