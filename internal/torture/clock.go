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

// pausable is a fence.Locker whose renewals stop while its worker is
// paused, as every thread of a process stops in a long garbage collection:
// a Renew called during a pause waits for it to end (or for its ctx). It
// embeds the Locker interface, so a session renews through its Renew
// (the wrapped locker's RenewMany is not promoted); NotifyRelease is
// passed on, so that waiting workers wake on releases where the store
// announces them.
type pausable struct {
	fence.Locker
	mu    sync.Mutex
	until time.Time
}

// pause stops renewals until the given time.
func (p *pausable) pause(until time.Time) {
	p.mu.Lock()
	p.until = until
	p.mu.Unlock()
}

// Renew waits for a pause to end, then renews.
func (p *pausable) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	for {
		// The pause may be extended while this call waits: look again.
		p.mu.Lock()
		wait := time.Until(p.until)
		p.mu.Unlock()
		if wait <= 0 {
			return p.Locker.Renew(ctx, lease)
		}
		if err := backoff.Sleep(ctx, wait); err != nil {
			return fence.Lease{}, err
		}
	}
}

// NotifyRelease passes the wrapped Locker's NotifyRelease on, or returns an
// error matching errors.ErrUnsupported when it has none.
func (p *pausable) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	n, ok := p.Locker.(driver.ReleaseNotifier)
	if !ok {
		return nil, nil, fmt.Errorf("torture: notify %q: %w", key, errors.ErrUnsupported)
	}
	return n.NotifyRelease(ctx, key)
}
