package fence

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Handle is a lock held through a Session: a lease that the session's
// keepalive renews and updates in place, so that every read of it is
// current. Get one from Session.Lock.
//
// Holding a handle is NOT a safety guarantee, only its Token is: pass it
// with every write to a fenced resource (see Resource and Bind). A process
// can pause after any check of Done and wake up after the lease was lost.
//
// A Handle is safe for concurrent use.
type Handle struct {
	s          *Session
	key, owner string
	token      Token
	acquiredAt time.Time // on the session's Clock

	slot      bool        // a semaphore's slot (Session.LockSemaphore)
	releasing atomic.Bool // Release was called: the keepalive lets go
	relOnce   sync.Once
	relErr    error

	mu         sync.Mutex
	ttl        time.Duration
	validUntil time.Time     // of the latest renewal
	err        error         // nil while held; *LeaseLostError or ErrReleased after
	done       chan struct{} // made by the first Done
	closed     bool          // the handle has ended: done is closed if made
	watchers   []*handleCtx
	watch1     [1]*handleCtx // the room of the first watcher after ctx1
	ctx1       handleCtx     // the first Context's room
	ctx1Used   bool

	ka     hstate  // the keepalive's view, guarded by Session.mu
	acqCtx callCtx // the context of the first acquire call
	relCtx callCtx // the context of the release call
}

// closedChan is the Done channel of a handle that ended before Done was
// called.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Key returns the lock's key.
func (h *Handle) Key() string { return h.key }

// Token returns the fencing token of the lease: the same for the handle's
// whole life.
func (h *Handle) Token() Token { return h.token }

// Lease returns the lease as of its latest renewal: its ValidUntil is the
// send time of that renewal, on the session's Clock, plus the TTL. The
// handle is lost before then, at the safety deadline (see
// SessionOptions.SafetyMargin), if no renewal succeeds meanwhile.
func (h *Handle) Lease() Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.leaseLocked()
}

// leaseLocked is Lease, with h.mu held.
func (h *Handle) leaseLocked() Lease {
	return Lease{Key: h.key, Owner: h.owner, Token: h.token, TTL: h.ttl, ValidUntil: h.validUntil}
}

// Done is closed when the handle stops holding its lease: when the lease
// is lost (Err returns a *LeaseLostError) or released (Err returns
// ErrReleased).
func (h *Handle) Done() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done == nil {
		if h.closed {
			return closedChan
		}
		h.done = make(chan struct{})
	}
	return h.done
}

// Err returns nil while the handle holds its lease. After Done is closed
// it returns why: a *LeaseLostError (matching ErrLeaseLost, and unwrapping
// to the reason: a renewal refused with ErrNotHeld, a *ReconcileError, a
// *DeadlineError, ...) when the lease was lost, or ErrReleased after a
// Release that freed it (or failed for another reason than the lease being
// gone: it then expires on the store after its TTL).
func (h *Handle) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Context returns a context derived from parent that is cancelled, with
// Err as its cause (context.Cause), when the handle stops holding its
// lease; and, like any context.WithCancel, when parent is done or cancel
// is called. It starts no goroutine.
func (h *Handle) Context(parent context.Context) (context.Context, context.CancelFunc) {
	c := h.context(parent)
	c.mu.Lock() // the session's keepalive may end the handle meanwhile
	ended := c.ended != nil
	c.mu.Unlock()
	if ended {
		return c, func() {}
	}
	return c, c.cancel
}

// context is Context without its CancelFunc (c.cancel), which guard.Run
// calls directly: the first context of a handle lives in the handle.
func (h *Handle) context(parent context.Context) *handleCtx {
	h.mu.Lock()
	var c *handleCtx
	if !h.ctx1Used {
		h.ctx1Used = true
		c = &h.ctx1
		c.parent, c.h = parent, h
	} else {
		c = &handleCtx{parent: parent, h: h}
	}
	if h.err != nil {
		c.ended = h.err
		h.mu.Unlock()
		return c
	}
	if c == &h.ctx1 {
		h.mu.Unlock()
		return c // the handle's end cancels it without a watcher entry
	}
	if h.watchers == nil {
		h.watchers = h.watch1[:0]
	}
	c.i = len(h.watchers)
	h.watchers = append(h.watchers, c)
	h.mu.Unlock()
	return c
}

// Release stops renewing the lease, waits for a renewal in flight to
// return (a store may apply a call its client gave up on, so the release
// must not overtake it), and frees the lease if it is still held:
// compare-and-delete, never a blind delete. It runs with the values of ctx
// but not its cancellation, so that work whose context ended can still
// release; SessionOptions.ReleaseTimeout bounds it.
//
// It returns nil when it freed the lease, and an error matching
// ErrNotHeld when the lease was no longer held (expired, broken, taken
// over); Err then returns a *LeaseLostError. Calling it again returns the
// first call's result.
func (h *Handle) Release(ctx context.Context) error {
	h.relOnce.Do(func() { h.relErr = h.s.release(ctx, h) })
	return h.relErr
}

// Publish sets the public value of the handle's lease (see
// Locker.Publish): anyone can read it with Locker.Inspect while the lease
// lives, and followers of an election see it with their leader. The call
// is bounded by the session's CallTimeout. It returns an error matching
// ErrNotHeld once the lease is lost or released.
func (h *Handle) Publish(ctx context.Context, value string) error {
	if err := h.Err(); err != nil {
		return &OpError{Backend: h.s.locker.spec.Name, Op: "publish", Key: h.key, Err: &NotHeldError{Key: h.key, Reason: err.Error()}}
	}
	ctx, cancel := context.WithTimeout(ctx, h.s.s.callTimeout)
	defer cancel()
	return h.s.locker.Publish(ctx, h.Lease(), value)
}

// lose records the loss, reports it, closes Done and cancels the
// contexts of Context. Only the first loss counts.
func (h *Handle) lose(reason error) {
	h.mu.Lock()
	if h.err != nil {
		h.mu.Unlock()
		return
	}
	lost := &LeaseLostError{Key: h.key, Token: h.token, Err: reason}
	h.err = lost
	lease := h.leaseLocked()
	h.mu.Unlock()
	h.s.obs().leaseLost(LeaseLostEvent{Lease: lease, Cause: lost})
	h.closeDone()
}

// end closes Done with err as the reason, unless the handle has one.
func (h *Handle) end(err error) {
	h.mu.Lock()
	if h.err == nil {
		h.err = err
	}
	h.closeDoneLocked()
}

// closeDone closes Done once and cancels the contexts of Context with
// the handle's Err.
func (h *Handle) closeDone() {
	h.mu.Lock()
	h.closeDoneLocked()
}

// closeDoneLocked is closeDone, called with h.mu held, which it
// unlocks.
func (h *Handle) closeDoneLocked() {
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	if h.done != nil {
		close(h.done)
	}
	watchers, err := h.watchers, h.err
	h.watchers = nil
	first := h.ctx1Used
	h.mu.Unlock()
	if first {
		h.ctx1.handleEnded(err)
	}
	for _, c := range watchers {
		if c != nil {
			c.handleEnded(err)
		}
	}
}

// setLease stores a renewal of the handle's lease.
func (h *Handle) setLease(l Lease) {
	h.mu.Lock()
	h.ttl, h.validUntil = l.TTL, l.ValidUntil
	h.mu.Unlock()
}

// release is Handle.Release.
func (s *Session) release(ctx context.Context, h *Handle) error {
	h.releasing.Store(true)
	s.letGo(h)
	h.mu.Lock()
	lease := h.leaseLocked()
	_, lostBefore := errors.AsType[*LeaseLostError](h.err)
	h.mu.Unlock()
	err := s.releaseIn(&h.relCtx, ctx, lease)
	if o := s.obs(); o != nil {
		o.released(ReleasedEvent{Lease: lease, Held: s.s.clock.Now().Sub(h.acquiredAt), Err: err})
	}
	if !lostBefore && errors.Is(err, ErrNotHeld) {
		h.lose(err)
	}
	h.end(ErrReleased)
	s.locker.lines.kick(h.key)
	if h.slot {
		s.slots.released(h.key, s.s.clock.Now())
	}
	return err
}
