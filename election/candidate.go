package election

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/internal/backoff"
)

// Func is the work of a leader. ctx is cancelled when the term ends (see
// the package documentation for the causes); term is the term's lock:
// term.Token() is the fencing token that every write to a protected
// resource must carry, the same for the whole term. The session renews
// the lease in the background and keeps term current (term.Lease() is the
// lease as last renewed), so it never goes stale. Func should lead until
// ctx is done: when it returns earlier, the term ends and the candidate
// holds off (Options.Holdoff) before campaigning again.
type Func func(ctx context.Context, term *fence.Handle) error

// Candidate campaigns for leadership of one key. Create it with New. Its
// methods are safe for concurrent use; Campaign runs once at a time.
type Candidate struct {
	sess        *fence.Session
	key         string
	s           settings
	campaigning atomic.Bool

	mu   sync.Mutex
	term *term // the running term, until its lease is released

	// pub is held (a value sent) by whoever publishes the value, so
	// that publishes happen one at a time and in order.
	pub   chan struct{}
	value string // under pub: what each term publishes
}

// term is one tenure of leadership.
type term struct {
	h        *fence.Handle
	cancel   context.CancelCauseFunc
	leading  bool        // under Candidate.mu; true from the first publish to the demotion
	stepDown atomic.Bool // resigned or returned: hold off before the next attempt
	demoted  chan struct{}
	released chan struct{}
}

// New returns a Candidate for key that takes its terms through s: each
// term is a lock of s, with its TTL and renewals. It checks the options
// (see Options) and returns an error matching fence.ErrInvalid for a nil
// s, an empty key or impossible settings; the locker checks the key's
// length and the TTL's range on the first attempt.
func New(s *fence.Session, key string, opts *Options) (*Candidate, error) {
	if s == nil {
		return nil, invalid("session", "nil")
	}
	if err := driver.ValidateKey("key", key, math.MaxInt); err != nil {
		return nil, err
	}
	st, err := resolve(s.TTL(), opts)
	if err != nil {
		return nil, err
	}
	st.clock = s.Clock()
	return &Candidate{sess: s, key: key, s: st, pub: make(chan struct{}, 1), value: st.value}, nil
}

// Run is New followed by Campaign.
func Run(ctx context.Context, s *fence.Session, key string, fn Func, opts *Options) error {
	c, err := New(s, key, opts)
	if err != nil {
		return err
	}
	return c.Campaign(ctx, fn)
}

// Campaign competes for leadership until ctx is done, and runs fn for each
// term won. Between attempts it waits RetryInterval (jittered), or
// Holdoff after a term ended by Resign or by fn returning. Store errors
// while campaigning are retried (the observer of the session's Locker
// sees each failed attempt).
//
// Campaign returns context.Cause(ctx) once ctx is done and any running
// term's lease has been released; an error matching fence.ErrInvalid when
// the locker rejects the key or the TTL; one matching
// fence.ErrSessionClosed once the session is closed (closing it ends a
// running term: the lease is released and the term's context cancelled
// with a cause matching fence.ErrReleased); ErrCampaigning when the
// candidate is already campaigning. A panic in fn ends the term, releases
// the lease and continues.
func (c *Candidate) Campaign(ctx context.Context, fn Func) error {
	if fn == nil {
		return invalid("fn", "nil")
	}
	if !c.campaigning.CompareAndSwap(false, true) {
		return ErrCampaigning
	}
	defer c.campaigning.Store(false)
	for {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		t, err := c.attempt(ctx, fn)
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		wait := backoff.Jitter(c.s.retry)
		switch {
		case t != nil:
			if t.stepDown.Load() {
				wait = c.s.holdoff
			}
		case errors.Is(err, fence.ErrHeld):
		case errors.Is(err, fence.ErrInvalid), errors.Is(err, fence.ErrSessionClosed):
			return err
		}
		if !c.sleep(ctx, wait) {
			return context.Cause(ctx)
		}
	}
}

// attempt tries once to take the key and, when it does, leads until the
// term ends. It returns the term (nil if the key was not taken) and
// guard.Run's result.
func (c *Candidate) attempt(ctx context.Context, fn Func) (t *term, err error) {
	defer func() {
		if t != nil {
			c.mu.Lock()
			c.term = nil
			c.mu.Unlock()
			close(t.released)
		}
	}()
	err = guard.Run(ctx, c.sess, c.key, func(gctx context.Context, h *fence.Handle) error {
		tctx, cancel := context.WithCancelCause(gctx)
		t = &term{h: h, cancel: cancel, demoted: make(chan struct{}), released: make(chan struct{})}
		c.mu.Lock()
		c.term = t
		c.mu.Unlock()
		if err := c.inaugurate(tctx, t); err != nil {
			cancel(err)
			return err // not elected: no events
		}
		c.s.obs.elected(ElectedEvent{Term: h})
		context.AfterFunc(tctx, func() { c.demote(t, context.Cause(tctx)) })
		returned := false
		defer func() {
			if !returned { // fn panicked: end the term before guard.Run releases
				cancel(ErrReturned)
				<-t.demoted
			}
		}()
		fnErr := fn(tctx, h)
		returned = true
		demotedFirst := tctx.Err() != nil
		cause := context.Cause(tctx)
		cancel(ErrReturned)
		<-t.demoted
		if !demotedFirst {
			t.stepDown.Store(true)
		}
		if fnErr != nil && !(demotedFirst && contextError(fnErr, cause)) {
			c.s.obs.failed(FailedEvent{Term: h, Err: fnErr})
		}
		return fnErr
	}, nil)
	return t, err
}

// contextError reports whether err is only the report of a cancelled
// context: its error or its cause.
func contextError(err, cause error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, cause)
}

// demote marks the end of t's leadership and reports it.
func (c *Candidate) demote(t *term, cause error) {
	c.mu.Lock()
	t.leading = false
	c.mu.Unlock()
	c.s.obs.demoted(DemotedEvent{Term: t.h, Cause: cause})
	close(t.demoted)
}

// Resign ends the current term, if any: the leader's context is cancelled
// with cause ErrResigned, and Resign waits until the leader's function has
// returned and the lease is released, so that another candidate can take
// the key at once. The candidate keeps campaigning after Options.Holdoff;
// to stop campaigning, cancel the context given to Campaign instead (that
// releases the lease too). Resign returns nil when the term's lease was
// released or when there was no term, and context.Cause(ctx) when ctx ends
// first.
func (c *Candidate) Resign(ctx context.Context) error {
	c.mu.Lock()
	t := c.term
	c.mu.Unlock()
	if t == nil {
		return nil
	}
	t.stepDown.Store(true)
	t.cancel(ErrResigned)
	select {
	case <-t.released:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// IsLeader reports whether the candidate is leading now, as far as it
// knows. It turns false as soon as the leader's context is cancelled. It
// is not a safety guarantee: see the package documentation.
func (c *Candidate) IsLeader() bool {
	_, ok := c.Leader()
	return ok
}

// Leader returns the lock of the current term and true while the
// candidate leads; nil and false otherwise. The handle is kept current by
// the session: its Lease is the lease as last renewed, and its Token, the
// same all term long, is what fences the leader's writes. Like IsLeader,
// it is not a safety guarantee.
func (c *Candidate) Leader() (*fence.Handle, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.term == nil || !c.term.leading {
		return nil, false
	}
	return c.term.h, true
}

// sleep waits d on the clock; it reports false when ctx ended first.
func (c *Candidate) sleep(ctx context.Context, d time.Duration) bool {
	t := c.s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}
