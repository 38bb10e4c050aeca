package fence

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callCtx is the context of one store call a Session makes: the values
// of the caller's context, and its cancellation unless detached, bounded
// by a deadline on the system clock. It behaves as context.WithDeadline,
// but makes the timer and the channel only when something asks for them
// (Done, Value, or Err once the deadline has passed): a driver that
// waits on the network asks at once, and a store in this process, which
// answers without waiting, never does. Call stop when the call returns.
type callCtx struct {
	parent   context.Context
	deadline time.Time
	detached bool // the parent's cancellation does not reach the call

	mu      sync.Mutex                  // serialises the making of inner
	inner   atomic.Pointer[deadlineCtx] // made on demand
	stopped atomic.Bool
}

// deadlineCtx is a context.WithDeadline and its CancelFunc.
type deadlineCtx struct {
	context.Context
	cancel context.CancelFunc
}

// init sets up the zero c for a call sent at now (time.Now) that may
// last timeout, before c is shared.
func (c *callCtx) init(parent context.Context, now time.Time, timeout time.Duration, detached bool) {
	c.parent, c.deadline, c.detached = parent, now.Add(timeout), detached
}

// made returns the context.WithDeadline that c stands for, making it on
// the first call.
func (c *callCtx) made() context.Context {
	if d := c.inner.Load(); d != nil {
		return d.Context
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.inner.Load(); d != nil {
		return d.Context
	}
	p := c.parent
	if c.detached {
		p = context.WithoutCancel(p)
	}
	ctx, cancel := context.WithDeadline(p, c.deadline)
	c.inner.Store(&deadlineCtx{ctx, cancel})
	if c.stopped.Load() { // stop ran before inner was there to cancel
		cancel()
	}
	return ctx
}

// stop ends c, as the CancelFunc of context.WithDeadline does.
func (c *callCtx) stop() {
	c.stopped.Store(true)
	if d := c.inner.Load(); d != nil {
		d.cancel()
	}
}

// Deadline implements context.Context.
func (c *callCtx) Deadline() (time.Time, bool) {
	if !c.detached {
		if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
			return d, true
		}
	}
	return c.deadline, true
}

// Done implements context.Context.
func (c *callCtx) Done() <-chan struct{} { return c.made().Done() }

// Value implements context.Context.
func (c *callCtx) Value(key any) any { return c.made().Value(key) }

// Err implements context.Context.
func (c *callCtx) Err() error { return c.errAt(time.Time{}) }

// errAt is Err, with now (time.Now, or zero to read it) as the time: the
// caller that has just read the clock saves a reading.
func (c *callCtx) errAt(now time.Time) error {
	if d := c.inner.Load(); d != nil {
		return d.Err()
	}
	if c.stopped.Load() {
		return context.Canceled
	}
	if !c.detached {
		if err := c.parent.Err(); err != nil {
			return err
		}
	}
	if now.IsZero() {
		now = time.Now()
	}
	if !now.Before(c.deadline) {
		return c.made().Err() // made past its deadline: done at once
	}
	return nil
}

// String names c as the context package names its own contexts.
func (c *callCtx) String() string {
	return "fence.callCtx(" + c.deadline.String() + ")"
}

// ctxErr returns ctx.Err(), reading the clock as now when ctx is a
// *callCtx and now is not zero.
func ctxErr(ctx context.Context, now time.Time) error {
	if c, ok := ctx.(*callCtx); ok {
		return c.errAt(now)
	}
	return ctx.Err()
}
