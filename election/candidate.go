package election

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/internal/backoff"
)

// Func is the work of a leader. ctx is cancelled when the term ends (see
// the package documentation for the causes); term is the term's lease as
// it was acquired, whose Token every write to a protected resource must
// carry. The token stays the same for the whole term; the guard renews the
// lease in the background without changing this copy, so its ValidUntil
// soon lies in the past: Candidate.Leader returns the lease as last
// renewed. Either copy names the same lease (see fence.Lease). Func should
// lead until ctx is done: when it returns earlier, the term ends and the
// candidate holds off (Options.Holdoff) before campaigning again.
type Func func(ctx context.Context, term fence.Lease) error

// Candidate campaigns for leadership of one key. Create it with New. Its
// methods are safe for concurrent use; Campaign runs once at a time.
type Candidate struct {
	key         string
	g           *guard.Guard
	s           settings
	campaigning atomic.Bool

	mu      sync.Mutex
	term    *term       // the running term, until its lease is released
	renewal fence.Lease // the latest renewal the guard reported
}

// term is one tenure of leadership.
type term struct {
	lease    fence.Lease // as last renewed; under Candidate.mu
	cancel   context.CancelCauseFunc
	leading  bool        // under Candidate.mu; false from the demotion on
	stepDown atomic.Bool // resigned or returned: hold off before the next attempt
	demoted  chan struct{}
	released chan struct{}
}

// New returns a Candidate for key on locker. It checks the options (see
// Options) and returns an error matching fence.ErrInvalid for a nil
// locker, an empty key or impossible settings; the locker checks the key's
// length and the TTL's range on the first attempt.
func New(locker fence.Locker, key string, opts *Options) (*Candidate, error) {
	if err := fence.ValidateKey("key", key, math.MaxInt); err != nil {
		return nil, err
	}
	s, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	c := &Candidate{key: key, s: s}
	gopts := s.guard
	gopts.Observer = c.watchRenewals(s.guard.Observer)
	g, err := guard.New(locker, &gopts)
	if err != nil {
		return nil, err
	}
	c.g = g
	return c, nil
}

// watchRenewals returns obs (which may be nil) with a Renewed hook that
// first keeps the running term's lease current, so that Leader hands out
// the lease as last renewed.
func (c *Candidate) watchRenewals(obs *guard.Observer) *guard.Observer {
	var o guard.Observer
	if obs != nil {
		o = *obs
	}
	next := o.Renewed
	o.Renewed = func(e guard.RenewedEvent) {
		if e.Err == nil {
			c.renewed(e.Lease)
		}
		if next != nil {
			next(e)
		}
	}
	return &o
}

// renewed records a successful renewal of lease.
func (c *Candidate) renewed(lease fence.Lease) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.renewal = lease
	if c.term != nil {
		c.term.lease = later(c.term.lease, lease)
	}
}

// later returns renewal if it is a later copy of lease (same key, owner
// and token, later ValidUntil), and lease otherwise.
func later(lease, renewal fence.Lease) fence.Lease {
	if renewal.Key == lease.Key && renewal.Owner == lease.Owner && renewal.Token == lease.Token && renewal.ValidUntil.After(lease.ValidUntil) {
		return renewal
	}
	return lease
}

// Run is New followed by Campaign.
func Run(ctx context.Context, locker fence.Locker, key string, fn Func, opts *Options) error {
	c, err := New(locker, key, opts)
	if err != nil {
		return err
	}
	return c.Campaign(ctx, fn)
}

// Campaign competes for leadership until ctx is done, and runs fn for each
// term won. Between attempts it waits RetryInterval (jittered), or
// Holdoff after a term ended by Resign or by fn returning. Store errors
// while campaigning are reported to Observer.Failed and retried.
//
// Campaign returns context.Cause(ctx) once ctx is done and any running
// term's lease has been released; an error matching fence.ErrInvalid when
// the locker rejects the key or the TTL; ErrCampaigning when the
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
		case errors.Is(err, fence.ErrInvalid):
			return err
		default:
			c.s.obs.failed(FailedEvent{Err: err})
		}
		if !c.sleep(ctx, wait) {
			return context.Cause(ctx)
		}
	}
}

// attempt tries once to take the key and, when it does, leads until the
// term ends. It returns the term (nil if the key was not taken) and the
// guard's result.
func (c *Candidate) attempt(ctx context.Context, fn Func) (t *term, err error) {
	defer func() {
		if t != nil {
			c.mu.Lock()
			c.term = nil
			c.mu.Unlock()
			close(t.released)
		}
	}()
	err = c.g.Do(ctx, c.key, func(gctx context.Context, lease fence.Lease) error {
		tctx, cancel := context.WithCancelCause(gctx)
		t = &term{lease: lease, cancel: cancel, leading: true, demoted: make(chan struct{}), released: make(chan struct{})}
		c.mu.Lock()
		c.term = t
		t.lease = later(lease, c.renewal) // a renewal that came before fn started
		c.mu.Unlock()
		c.s.obs.elected(ElectedEvent{Lease: lease})
		context.AfterFunc(tctx, func() { c.demote(t, context.Cause(tctx)) })
		returned := false
		defer func() {
			if !returned { // fn panicked: end the term before the guard releases
				cancel(ErrReturned)
				<-t.demoted
			}
		}()
		fnErr := fn(tctx, lease)
		returned = true
		demotedFirst := tctx.Err() != nil
		cause := context.Cause(tctx)
		cancel(ErrReturned)
		<-t.demoted
		if !demotedFirst {
			t.stepDown.Store(true)
		}
		if fnErr != nil && !(demotedFirst && contextError(fnErr, cause)) {
			c.s.obs.failed(FailedEvent{Lease: c.termLease(t), Err: fnErr})
		}
		return fnErr
	})
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
	lease := t.lease
	c.mu.Unlock()
	c.s.obs.demoted(DemotedEvent{Lease: lease, Cause: cause})
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

// Leader returns the lease of the current term, as last renewed, and true
// while the candidate leads; the zero Lease and false otherwise. Its
// ValidUntil is that of the latest successful renewal; its Token, the
// same all term long, is what fences the leader's writes.
func (c *Candidate) Leader() (fence.Lease, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.term == nil || !c.term.leading {
		return fence.Lease{}, false
	}
	return c.term.lease, true
}

// termLease returns t's lease as last renewed.
func (c *Candidate) termLease(t *term) fence.Lease {
	c.mu.Lock()
	defer c.mu.Unlock()
	return t.lease
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
