package guard

import (
	"context"
	"errors"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/hook"
)

// AllFunc is work run under several leases at once (RunAll). ctx is
// cancelled as soon as any of the leases is lost, with that lease's
// *fence.LeaseLostError as its cause, and when the caller's ctx is done.
// hs holds one handle per key, in the order of the keys given to RunAll:
// each with its own key's token, which the writes to that key's resource
// must carry (a transfer writes each account with its account's token).
type AllFunc func(ctx context.Context, hs []*fence.Handle) error

// RunAll takes every key of keys through s, all or nothing
// (fence.Session.LockAll: in one atomic operation where the store has
// one, else one key at a time in a global order, so that crossing orders
// never deadlock), waiting as opts says (by default it tries once), runs
// fn under the leases while s renews them, and releases them all.
//
// When a key is busy, RunAll returns an error matching fence.ErrHeld,
// naming that key, without running fn and holding nothing. Invalid input
// (fence.ErrInvalid: a nil s or fn, no key, a key twice) and corrupted
// records (fence.ErrCorrupt) are returned at once.
//
// fn's context is cancelled as soon as any one lease is lost (see Run
// for when a lease counts as lost), with that lease's
// *fence.LeaseLostError as context.Cause: the work must stop, since a
// resource fenced by the lost key refuses its writes from the moment
// another holder writes with a higher token. The other leases are kept
// until fn returns.
//
// When fn returns or panics, RunAll releases every handle, the last key
// first, each as Run releases its one (also when ctx is done). A panic
// continues after the releases.
//
// RunAll returns fn's error unless a lease was lost; then it returns an
// error matching fence.ErrLeaseLost that holds every lease lost
// (errors.Join), and fn's error with them unless fn returned one of
// them already (such as context.Cause of its ctx).
func RunAll(ctx context.Context, s *fence.Session, keys []string, fn AllFunc, opts *fence.LockOptions) error {
	switch {
	case s == nil:
		return invalid("session", "nil")
	case fn == nil:
		return invalid("fn", "nil")
	}
	hs, err := s.LockAll(ctx, keys, opts)
	if err != nil {
		return err
	}
	// One context per handle, each a child of the one before: the loss of
	// any handle cancels the last, which fn gets, with that loss as its
	// cause. No goroutine watches them.
	works := make([]context.Context, len(hs))
	work := ctx
	for i, h := range hs {
		work = hook.WorkContext(h, work)
		works[i] = work
	}
	returned := false
	defer func() {
		if !returned { // fn panicked or called runtime.Goexit
			finishAll(ctx, hs, works, nil)
		}
	}()
	fnErr := fn(work, hs)
	returned = true
	return finishAll(ctx, hs, works, fnErr)
}

// finishAll ends fn's contexts, releases the leases (the last key first)
// and decides RunAll's result.
func finishAll(ctx context.Context, hs []*fence.Handle, works []context.Context, fnErr error) error {
	for i := len(works) - 1; i >= 0; i-- {
		hook.EndWork(works[i])
	}
	for i := len(hs) - 1; i >= 0; i-- {
		_ = hs[i].Release(ctx) // the observer sees its outcome; a loss it reveals shows in Err
	}
	errs := []error{fnErr}
	for _, h := range hs {
		lost, isLost := errors.AsType[*fence.LeaseLostError](h.Err())
		if isLost && !errors.Is(fnErr, lost) {
			errs = append(errs, lost)
		}
	}
	switch {
	case len(errs) == 1:
		return fnErr
	case len(errs) == 2 && fnErr == nil:
		return errs[1]
	default:
		return errors.Join(errs...)
	}
}
