package guard

import (
	"context"
	"errors"
	"fmt"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/hook"
)

// Func is work run under a lease. ctx is cancelled when the lease is lost,
// with a *fence.LeaseLostError as its cause (see context.Cause), and when
// the caller's ctx is done. h is the lock: h.Token() is the fencing token
// that every write to a protected resource must carry (or bind the
// resource to h with fence.Bind). The session keeps h current: it never
// goes stale, whatever fn keeps of it.
type Func func(ctx context.Context, h *fence.Handle) error

// Run takes key through s, waiting as opts says (fence.LockOptions: by
// default it tries once), runs fn under the lease while s renews it, and
// releases it.
//
// When the key is busy, Run returns an error matching fence.ErrHeld
// without running fn. Invalid input (fence.ErrInvalid, also for a nil s
// or fn) and corrupted records (fence.ErrCorrupt) are returned at once;
// see fence.Session.Lock for the rest.
//
// While fn runs, s renews the lease. fn's context is cancelled with a
// *fence.LeaseLostError cause (matching fence.ErrLeaseLost, unwrapping to
// the reason) as soon as a renewal fails definitively, a re-read after an
// ambiguous renewal shows the lease gone, or the local safety deadline
// (fence.SessionOptions.SafetyMargin) passes without a successful
// renewal.
//
// When fn returns or panics, Run releases the handle (fence.Handle.Release:
// it waits for a renewal in flight, and runs even when ctx is done). A
// panic continues after the release.
//
// Run returns fn's error, unless the lease was lost: then it returns an
// error matching fence.ErrLeaseLost: the *fence.LeaseLostError alone when
// fn returned nil or an error already matching fence.ErrLeaseLost (such as
// context.Cause of its ctx), and errors.Join(fnErr, lost) otherwise. A
// release that finds the lease no longer held when no loss was seen
// before counts as a loss (the lease may have been lost while fn ran). A
// release that fails for another reason does not change the result: the
// work is done and the lease expires after its TTL; the Locker's observer
// sees it.
func Run(ctx context.Context, s *fence.Session, key string, fn Func, opts *fence.LockOptions) error {
	switch {
	case s == nil:
		return invalid("session", "nil")
	case fn == nil:
		return invalid("fn", "nil")
	}
	h, err := s.Lock(ctx, key, opts)
	if err != nil {
		return err
	}
	// h.Context, without the closure of its CancelFunc.
	work := hook.WorkContext(h, ctx)
	returned := false
	defer func() {
		if !returned { // fn panicked or called runtime.Goexit
			finish(ctx, h, work, nil)
		}
	}()
	fnErr := fn(work, h)
	returned = true
	return finish(ctx, h, work, fnErr)
}

// finish ends fn's context, releases the lease and decides Run's result.
func finish(ctx context.Context, h *fence.Handle, work context.Context, fnErr error) error {
	hook.EndWork(work)
	_ = h.Release(ctx) // the observer sees its outcome; a loss it reveals shows in Err
	lost, isLost := errors.AsType[*fence.LeaseLostError](h.Err())
	switch {
	case !isLost:
		return fnErr
	case fnErr == nil:
		return lost
	case errors.Is(fnErr, fence.ErrLeaseLost):
		return fnErr
	default:
		return errors.Join(fnErr, lost)
	}
}

func invalid(field, format string, args ...any) error {
	return &fence.InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
