// Package guard runs work under a lease: it takes a handle from a
// fence.Session over a fence.Locker (once, or waiting up to a timeout),
// which the session's keepalive renews, cancels the work's context when
// the lease is lost, and releases it when the work returns or panics.
//
//	err := guard.Run(ctx, locker, "nightly-report", func(ctx context.Context, h *fence.Handle) error {
//		return reports.Put(ctx, "daily.csv", h.Token(), data) // the resource checks the token
//	}, nil)
//	if errors.Is(err, fence.ErrHeld) {
//		return nil // another replica runs it
//	}
//
// # Acquiring
//
// By default the guard tries once: a busy key returns an error matching
// fence.ErrHeld at once, so a duplicate job skips its turn. With
// Options.AcquireTimeout it waits (fence.Session.Lock) for at most that
// long; the caller's context can end the wait sooner but never extends
// it. A waiting Do wakes when the key is released by a Do of this
// process, when the store notifies a release (PostgreSQL), when the
// holder's lease ends where the store says when, or after
// Options.PollInterval; the Do calls of one Guard waiting for one key get
// it in arrival order. Invalid input and corrupted records end the
// attempt at once; other errors are retried in wait mode. An attempt whose
// outcome is unknown is reconciled by reading the record: each Do call
// acquires under its own fresh owner id, so a lease won by a call whose
// answer was lost is recognised and used (or released).
//
// # An efficiency device, not a safety guarantee
//
// The guard keeps two workers from doing the same job most of the time. It
// cannot keep a stale worker from writing: a process can pause (garbage
// collection, VM migration, a partition) after its last check and wake up
// after its lease expired and another worker took the key, and no
// renewing or context checking closes that window. Safety comes from the
// fencing token: pass h.Token(), given to fn, with every write to the
// protected resource, which refuses tokens lower than the highest it has
// seen (see fence.Resource). A lost lease then costs a refused write, never
// corrupted data.
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
//     request may have been sent) and re-reading the record with
//     Locker.Inspect shows the key free or held by another owner or token
//     (a *ReconcileError). If the record still shows the lease, the guard
//     retries the renewal soon; it never guesses;
//   - the local safety deadline passes while renewals keep failing
//     transiently or hang (a *DeadlineError). The deadline is the send time
//     of the last successful acquire or renew call, read before the call
//     was made, plus the TTL, minus Options.SafetyMargin. It fires even
//     while a renewal call hangs.
//
// Times come from Options.Clock. On the system clock they carry Go's
// monotonic reading, so the deadline and every other duration are measured
// on the monotonic clock and wall-clock steps do not move them.
//
// # Releasing
//
// When fn returns or panics, the guard stops renewing and waits for a
// renewal in flight to return: it does not cancel the call and assume it
// did not happen, since a store may still apply a call its client gave up
// on (Options.CallTimeout bounds the wait). Then it releases the lease with
// its own bounded context derived with context.WithoutCancel, so the
// release also runs when the caller's context is done. A panic continues
// after the release.
//
// # Metrics
//
// Options.Observer receives acquisition attempts and their outcome,
// acquisition latency, renewals, losses and the release with the hold
// duration; see Observer.
package guard
