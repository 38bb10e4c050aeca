package fence

import (
	"context"
	"sync"
	"time"
)

// handleCtx is the context of Handle.Context. It behaves as the
// context.WithCancelCause of its parent that the handle's end cancels
// with the handle's Err, but makes that context only when something asks
// for its channel or its values (Done, Value, context.Cause): work that
// never does (a job that returns at once) costs no channel and no
// cancellation. When the handle ended, or cancel was called, before the
// context was first asked, the first of those two is the cause, even if
// the parent was done meanwhile too.
type handleCtx struct {
	parent context.Context
	h      *Handle
	i      int // index in h.watchers

	mu       sync.Mutex
	inner    context.Context // made on demand
	cancelIn context.CancelCauseFunc
	ended    error // the handle's end, seen before inner was made
	canceled bool  // cancel was called before inner was made
}

// made returns the context.WithCancelCause that c stands for, making it
// on the first call.
func (c *handleCtx) made() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner != nil {
		return c.inner
	}
	switch {
	case c.ended != nil:
		c.inner, c.cancelIn = context.WithCancelCause(context.WithoutCancel(c.parent))
		c.cancelIn(c.ended)
	case c.canceled:
		c.inner, c.cancelIn = context.WithCancelCause(context.WithoutCancel(c.parent))
		c.cancelIn(context.Canceled)
	default:
		c.inner, c.cancelIn = context.WithCancelCause(c.parent)
	}
	return c.inner
}

// handleEnded cancels c with err, the handle's Err: closeDone calls it.
func (c *handleCtx) handleEnded(err error) {
	c.mu.Lock()
	if c.inner != nil {
		cancel := c.cancelIn
		c.mu.Unlock()
		cancel(err)
		return
	}
	if !c.canceled && c.ended == nil {
		c.ended = err
	}
	c.mu.Unlock()
}

// cancel is the CancelFunc of Handle.Context.
func (c *handleCtx) cancel() {
	c.mu.Lock()
	cancel := c.cancelIn
	if c.inner == nil && c.ended == nil {
		c.canceled = true
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel(context.Canceled)
	}
	h := c.h
	if c == &h.ctx1 {
		return // it lives in the handle: nothing to drop from watchers
	}
	h.mu.Lock()
	if c.i < len(h.watchers) && h.watchers[c.i] == c {
		h.watchers[c.i] = nil
	}
	h.mu.Unlock()
}

// Deadline implements context.Context.
func (c *handleCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done implements context.Context.
func (c *handleCtx) Done() <-chan struct{} { return c.made().Done() }

// Value implements context.Context.
func (c *handleCtx) Value(key any) any { return c.made().Value(key) }

// Err implements context.Context.
func (c *handleCtx) Err() error {
	c.mu.Lock()
	inner, stopped := c.inner, c.ended != nil || c.canceled
	c.mu.Unlock()
	switch {
	case inner != nil:
		return inner.Err()
	case stopped:
		return context.Canceled
	}
	return c.parent.Err()
}

// String names c as the context package names its own contexts.
func (c *handleCtx) String() string { return "fence.Handle.Context" }
