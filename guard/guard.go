package guard

import (
	"context"
	"errors"
	"time"

	"github.com/fencekit/fence"
)

// Func is work run under a lease. ctx is cancelled when the lease is lost,
// with a *fence.LeaseLostError as its cause (see context.Cause), and when
// the caller's ctx is done. h is the lock: h.Token() is the fencing token
// that every write to a protected resource must carry (or bind the
// resource to h with fence.Bind). The session keeps h current: it never
// goes stale, whatever fn keeps of it.
type Func func(ctx context.Context, h *fence.Handle) error

// Guard runs functions under leases taken from one Locker with one set of
// Options, through one fence.Session: one keepalive renews the leases of
// every Do call in flight, and Do calls waiting for the same key queue in
// arrival order. It is safe for concurrent use; each Do call takes its own
// lease with its own owner id.
type Guard struct {
	sess           *fence.Session
	acquireTimeout time.Duration // 0: try once
}

// New returns a Guard over locker. opts may be nil. It returns an error
// matching fence.ErrInvalid when locker is nil or the options are
// impossible (see Options).
func New(locker fence.Locker, opts *Options) (*Guard, error) {
	if locker == nil {
		return nil, invalid("locker", "nil")
	}
	so, wait, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	sess, err := fence.NewSession(locker, &so)
	if err != nil {
		return nil, err
	}
	return &Guard{sess: sess, acquireTimeout: wait}, nil
}

// Session returns the session the guard takes its leases through.
func (g *Guard) Session() *fence.Session { return g.sess }

// Run is New followed by Do, for a single call.
func Run(ctx context.Context, locker fence.Locker, key string, fn Func, opts *Options) error {
	g, err := New(locker, opts)
	if err != nil {
		return err
	}
	return g.Do(ctx, key, fn)
}

// Do acquires a lease on key, runs fn under it while the session renews
// it, and releases it.
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
// in flight to finish (at most Options.CallTimeout), and releases the
// lease with its own context (see Options.ReleaseTimeout), even when ctx
// is done. A panic continues after the release.
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
	h, err := g.sess.Lock(ctx, key, &fence.LockOptions{Wait: g.acquireTimeout})
	if err != nil {
		return err
	}
	work, cancel := h.Context(ctx)
	returned := false
	defer func() {
		if !returned { // fn panicked or called runtime.Goexit
			finish(ctx, h, cancel, nil)
		}
	}()
	fnErr := fn(work, h)
	returned = true
	return finish(ctx, h, cancel, fnErr)
}

// finish ends fn's context, releases the lease and decides Do's result.
func finish(ctx context.Context, h *fence.Handle, cancel context.CancelFunc, fnErr error) error {
	cancel()
	_ = h.Release(ctx) // the Observer sees its outcome; a loss it reveals shows in Err
	var lost *fence.LeaseLostError
	switch {
	case !errors.As(h.Err(), &lost):
		return fnErr
	case fnErr == nil:
		return lost
	case errors.Is(fnErr, fence.ErrLeaseLost):
		return fnErr
	default:
		return errors.Join(fnErr, lost)
	}
}
