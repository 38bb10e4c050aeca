// Package guard runs work under a lease: Run takes a lock through the
// application's fence.Session (trying once, or waiting as
// fence.LockOptions says), runs the work while the session renews the
// lease, cancels the work's context when the lease is lost, and releases
// it when the work returns or panics.
//
//	sess, err := fence.NewSession(locker, nil) // one per application and TTL
//	...
//	err = guard.Run(ctx, sess, "nightly-report", func(ctx context.Context, h *fence.Handle) error {
//		return reports.Put(ctx, "daily.csv", h.Token(), data) // the resource checks the token
//	}, nil)
//	if errors.Is(err, fence.ErrHeld) {
//		return nil // another replica runs it
//	}
//
// # Acquiring
//
// By default Run tries once: a busy key returns an error matching
// fence.ErrHeld at once, so a duplicate job skips its turn. With
// fence.LockOptions.Wait it waits up to that long, or until ctx ends
// (fence.WaitForever), the way fence.Session.Lock does: the callers
// waiting for one key on one Locker get it in arrival order, and an
// attempt whose outcome is unknown is reconciled by reading the record.
//
// # Several keys
//
// RunAll runs work under several keys at once, all or nothing (a
// transfer between two accounts), through fence.Session.LockAll: one
// handle per key, each with its own key's token for the writes to that
// key's resource. Its work is cancelled as soon as any one lease is
// lost, with that lease's *fence.LeaseLostError as the cause.
//
// # An efficiency device, not a safety guarantee
//
// A guard keeps two workers from doing the same job most of the time. It
// cannot keep a stale worker from writing: a process can pause (garbage
// collection, VM migration, a partition) after its last check and wake up
// after its lease expired and another worker took the key, and no
// renewing or context checking closes that window. Safety comes from the
// fencing token: pass h.Token(), given to fn, with every write to the
// protected resource, which refuses tokens lower than the highest it has
// seen (see fence.Resource and fence.Bind). A lost lease then costs a
// refused write, never corrupted data.
//
// # Losing the lease
//
// fn's context is cancelled with context.Cause returning a
// *fence.LeaseLostError (errors.Is fence.ErrLeaseLost; Unwrap gives the
// reason) when:
//
//   - a renewal fails definitively: the locker says the lease is no longer
//     held (fence.ErrNotHeld), or the input or record is bad
//     (fence.ErrInvalid, fence.ErrCorrupt);
//   - a renewal's outcome is unknown (a timeout or store error after the
//     request may have been sent) and re-reading the record shows the key
//     free or held by another owner or token (a *fence.ReconcileError). If
//     the record still shows the lease, the session retries the renewal
//     soon; it never guesses;
//   - the local safety deadline passes while renewals keep failing
//     transiently or hang (a *fence.DeadlineError): see
//     fence.SessionOptions.SafetyMargin. It fires even while a renewal
//     call hangs.
//
// # Releasing
//
// When fn returns or panics, Run releases the handle: the session stops
// renewing it and waits for a renewal in flight to return (it does not
// cancel the call and assume it did not happen, since a store may still
// apply a call its client gave up on), then frees the lease with a
// context of its own, bounded by fence.SessionOptions.ReleaseTimeout, so
// the release also runs when the caller's context is done. A panic
// continues after the release.
//
// # Metrics
//
// The attempts, the acquisition, renewals, losses and the release of
// every lease taken through a session go to the observer of its Locker
// (fence.Locker.SetObserver); guard adds none of its own.
package guard
