package torture

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
)

// SkewedClock is a fence.Clock that reads Offset off the system clock, the
// clock of a machine whose time is wrong. Durations (and timers) are not
// affected: a skewed clock runs at the right rate.
type SkewedClock struct{ Offset time.Duration }

// Now returns the system time plus Offset.
func (c SkewedClock) Now() time.Time { return time.Now().Add(c.Offset) }

// NewTimer returns a system timer.
func (SkewedClock) NewTimer(d time.Duration) fence.Timer { return fence.SystemClock{}.NewTimer(d) }

// pausable stops the renewals of one worker's Locker while the worker is
// paused, as every thread of a process stops in a long garbage
// collection: a renewal called during a pause waits for it to end (or for
// its ctx). It sits under the worker's *fence.Locker as a wrapped driver
// (see driver.Wrap) that renews one lease per call, so that each renewal
// of a session waits; release notices, multi-key acquisitions, published
// values, Create and As are passed on.
type pausable struct {
	mu    sync.Mutex
	until time.Time
}

// wrap returns l over a driver whose renewals wait for p's pauses.
func (p *pausable) wrap(l *fence.Locker) (*fence.Locker, error) {
	return driver.Wrap(l, func(d driver.Locker) driver.Locker { return &pausing{Locker: d, p: p} })
}

// pause stops renewals until the given time.
func (p *pausable) pause(until time.Time) {
	p.mu.Lock()
	p.until = until
	p.mu.Unlock()
}

// wait returns once no pause is on, or with ctx's error.
func (p *pausable) wait(ctx context.Context) error {
	for {
		// The pause may be extended while this call waits: look again.
		p.mu.Lock()
		wait := time.Until(p.until)
		p.mu.Unlock()
		if wait <= 0 {
			return nil
		}
		if err := backoff.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// pausing is the driver under a paused worker's Locker.
type pausing struct {
	driver.Locker
	p *pausable
}

// Renew waits for a pause to end, then renews.
func (d *pausing) Renew(ctx context.Context, lease fence.Lease) error {
	if err := d.p.wait(ctx); err != nil {
		return err
	}
	return d.Locker.Renew(ctx, lease)
}

// NotifyRelease passes the wrapped driver's NotifyRelease on, or returns
// an error matching errors.ErrUnsupported when it has none.
func (d *pausing) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	n, ok := d.Locker.(driver.ReleaseNotifier)
	if !ok {
		return nil, nil, fmt.Errorf("torture: notify %q: %w", key, errors.ErrUnsupported)
	}
	return n.NotifyRelease(ctx, key)
}

// AcquireAll passes the wrapped driver's AcquireAll on, or returns an
// error matching errors.ErrUnsupported when it has none (the session then
// takes the keys one at a time).
func (d *pausing) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	m, ok := d.Locker.(driver.MultiAcquirer)
	if !ok {
		return nil, fmt.Errorf("torture: acquire %d keys at once: %w", len(keys), errors.ErrUnsupported)
	}
	return m.AcquireAll(ctx, keys, owners, ttl)
}

// Publish passes the wrapped driver's Publish on, or returns an error
// matching errors.ErrUnsupported when it has none.
func (d *pausing) Publish(ctx context.Context, lease fence.Lease, value string) error {
	p, ok := d.Locker.(driver.Publisher)
	if !ok {
		return fmt.Errorf("torture: publish %q: %w", lease.Key, errors.ErrUnsupported)
	}
	return p.Publish(ctx, lease, value)
}

// As passes the wrapped driver's As on.
func (d *pausing) As(target any) bool {
	a, ok := d.Locker.(driver.Aser)
	return ok && a.As(target)
}

// Create passes the wrapped driver's Create on.
func (d *pausing) Create(ctx context.Context) error {
	c, ok := d.Locker.(driver.Creator)
	if !ok {
		return errors.ErrUnsupported
	}
	return c.Create(ctx)
}
