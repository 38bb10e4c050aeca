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

	releasing atomic.Bool // Release was called: the keepalive lets go
	relOnce   sync.Once
	relErr    error

	mu       sync.Mutex
	lease    Lease // latest renewal
	err      error // nil while held; *LeaseLostError or ErrReleased after
	done     chan struct{}
	closed   bool // done is closed
	watchers []context.CancelCauseFunc
}

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
	return h.lease
}

// Done is closed when the handle stops holding its lease: when the lease
// is lost (Err returns a *LeaseLostError) or released (Err returns
// ErrReleased).
func (h *Handle) Done() <-chan struct{} { return h.done }

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
	ctx, cancel := context.WithCancelCause(parent)
	h.mu.Lock()
	if h.err != nil {
		err := h.err
		h.mu.Unlock()
		cancel(err)
		return ctx, func() {}
	}
	i := len(h.watchers)
	h.watchers = append(h.watchers, cancel)
	h.mu.Unlock()
	return ctx, func() {
		cancel(context.Canceled)
		h.mu.Lock()
		if i < len(h.watchers) {
			h.watchers[i] = nil
		}
		h.mu.Unlock()
	}
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
	lease := h.lease
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
	h.mu.Unlock()
	h.closeDone()
}

// closeDone closes Done once and cancels the contexts of Context with
// the handle's Err.
func (h *Handle) closeDone() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	close(h.done)
	watchers, err := h.watchers, h.err
	h.watchers = nil
	h.mu.Unlock()
	for _, cancel := range watchers {
		if cancel != nil {
			cancel(err)
		}
	}
}

// lost returns the *LeaseLostError if the handle was lost.
func (h *Handle) lost() *LeaseLostError {
	lost, _ := errors.AsType[*LeaseLostError](h.Err())
	return lost
}

// setLease stores a renewal.
func (h *Handle) setLease(l Lease) {
	h.mu.Lock()
	h.lease = l
	h.mu.Unlock()
}

// release is Handle.Release.
func (s *Session) release(ctx context.Context, h *Handle) error {
	h.releasing.Store(true)
	s.letGo(h)
	lease := h.Lease()
	lostBefore := h.lost()
	err := s.releaseLease(ctx, lease)
	s.obs().released(ReleasedEvent{Lease: lease, Held: s.s.clock.Now().Sub(h.acquiredAt), Err: err})
	if lostBefore == nil && errors.Is(err, ErrNotHeld) {
		h.lose(err)
	}
	h.end(ErrReleased)
	s.locker.lines.kick(h.key)
	return err
}
