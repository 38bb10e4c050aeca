package guard

import (
	"context"
	"errors"

	"github.com/fencekit/fence"
)

// Func is work run under a lease. ctx is cancelled when the lease is lost,
// with a *fence.LeaseLostError as its cause (see context.Cause), and when
// the caller's ctx is done. lease carries the fencing token that every
// write to a protected resource must carry.
type Func func(ctx context.Context, lease fence.Lease) error

// Guard runs functions under leases taken from one Locker with one set of
// Options. It is safe for concurrent use; each Do call takes its own lease
// with its own owner id.
type Guard struct {
	locker fence.Locker
	s      settings
}

// New returns a Guard over locker. opts may be nil. It returns an error
// matching fence.ErrInvalid when locker is nil or the options are
// impossible (see Options).
func New(locker fence.Locker, opts *Options) (*Guard, error) {
	if locker == nil {
		return nil, invalid("locker", "nil")
	}
	s, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	return &Guard{locker: locker, s: s}, nil
}

// Run is New followed by Do, for a single call.
func Run(ctx context.Context, locker fence.Locker, key string, fn Func, opts *Options) error {
	g, err := New(locker, opts)
	if err != nil {
		return err
	}
	return g.Do(ctx, key, fn)
}

// Do acquires a lease on key, runs fn under it while renewing it in the
// background, and releases it.
//
// Acquisition: see Options.AcquireTimeout. When the key is busy, Do returns
// an error matching fence.ErrHeld without running fn. Invalid input
// (fence.ErrInvalid) and corrupted records (fence.ErrCorrupt) are returned
// at once; other errors are retried in wait mode.
//
// While fn runs, the lease is renewed every Options.RenewInterval. fn's
// context is cancelled with a *fence.LeaseLostError cause (matching
// fence.ErrLeaseLost, unwrapping to the reason) as soon as a renewal fails
// definitively, a re-read after an ambiguous renewal shows the lease gone,
// or the local safety deadline (see Options.SafetyMargin) passes without a
// successful renewal.
//
// When fn returns or panics, Do stops the renewals, waits for any renewal
// in flight to finish (at most Options.CallTimeout), and releases the lease with its own context (see
// Options.ReleaseTimeout), even when ctx is done. A panic continues after
// the release.
//
// Do returns fn's error, unless the lease was lost: then it returns an
// error matching fence.ErrLeaseLost: the *fence.LeaseLostError alone when
// fn returned nil or an error already matching fence.ErrLeaseLost (such as
// context.Cause of its ctx), and errors.Join(fnErr, lost) otherwise. A
// release that finds the lease no longer held when no loss was seen
// before counts as a loss (the lease may have been lost while fn ran). A
// release that fails for another reason does not change the result: the
// work is done and the lease expires after its TTL; the Observer sees it.
func (g *Guard) Do(ctx context.Context, key string, fn Func) error {
	if fn == nil {
		return invalid("fn", "nil")
	}
	a, err := g.acquire(ctx, key)
	if err != nil {
		return err
	}
	work, cancel := context.WithCancelCause(ctx)
	k := startKeeper(&g.s, g.locker, context.WithoutCancel(ctx), a.lease, a.sent, cancel)
	returned := false
	defer func() {
		if !returned { // fn panicked or called runtime.Goexit
			g.finish(ctx, a, k, cancel, nil)
		}
	}()
	fnErr := fn(work, a.lease)
	returned = true
	return g.finish(ctx, a, k, cancel, fnErr)
}

// finish stops the keeper, releases the lease and decides Do's result.
func (g *Guard) finish(ctx context.Context, a acquired, k *keeper, cancel context.CancelCauseFunc, fnErr error) error {
	lost := k.halt()
	cancel(context.Canceled)
	a.lease = k.lease // the latest renewal: what the locker knows best
	relErr := g.release(ctx, a)
	if lost == nil && errors.Is(relErr, fence.ErrNotHeld) {
		lost = &fence.LeaseLostError{Key: a.lease.Key, Token: a.lease.Token, Err: relErr}
		g.s.obs.leaseLost(LeaseLostEvent{Lease: a.lease, Cause: lost})
	}
	switch {
	case lost == nil:
		return fnErr
	case fnErr == nil || errors.Is(fnErr, fence.ErrLeaseLost):
		return orLost(fnErr, lost)
	default:
		return errors.Join(fnErr, lost)
	}
}

func orLost(fnErr error, lost *fence.LeaseLostError) error {
	if fnErr != nil {
		return fnErr
	}
	return lost
}

// release frees the lease and reports it to the Observer.
func (g *Guard) release(ctx context.Context, a acquired) error {
	err := g.releaseLease(ctx, a.lease)
	g.s.obs.released(ReleasedEvent{Lease: a.lease, Held: g.s.clock.Now().Sub(a.at), Err: err})
	return err
}

// releaseLease frees lease with a context bounded by ReleaseTimeout that
// ignores the cancellation of ctx.
func (g *Guard) releaseLease(ctx context.Context, lease fence.Lease) error {
	relCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.s.releaseTimeout)
	defer cancel()
	return g.locker.Release(relCtx, lease)
}
