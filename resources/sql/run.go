package sql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/fencekit/fence"
)

// RunOptions are the optional settings of Run. A nil *RunOptions means
// every default.
type RunOptions struct {
	// Name is the fence row's key: the lock's key, or a name under it
	// (key + "/" + more, checked by fence.BoundName), so that a token of
	// one lock cannot pass the fence of another lock's data. Default: the
	// lock's key.
	Name string
	// Isolation is the isolation level the transactions begin with.
	// Default: sql.LevelDefault, the database's (READ COMMITTED in
	// PostgreSQL unless configured otherwise, REPEATABLE READ in InnoDB;
	// SQLite is always serializable). With pgx, the levels other than
	// read uncommitted, read committed, repeatable read and serializable
	// are invalid.
	Isolation sql.IsolationLevel
}

// Run runs fn in a fenced transaction under h, a lock the caller holds
// through the application's fence.Session (take it with Session.Lock, or
// run Run in the function of guard.Run, which takes and releases the
// lock around it). The fence row of h's key (or opts.Name) is checked and
// advanced with h's token first, as Check does; then fn runs with the
// transaction, and the transaction commits if fn returns nil. opts may be
// nil. One handle may serve many transactions.
//
// The fence is the transaction's first statement. With pgx (NewPgx),
// BEGIN and the fence go to the server in one batch, so the fence costs
// no round trip beyond those of a plain transaction: one for BEGIN and the
// fence, fn's own, one for COMMIT. database/sql sends one statement at a
// time, so there the fence costs one round trip of its own (two
// statements in MySQL).
//
// fn's ctx is cancelled when h loses its lease (context.Cause is then the
// *fence.LeaseLostError) or ctx is done; fn must run its statements on tx
// with that ctx, and do nothing outside tx that cannot be repeated: a
// conflict (see Retryable) runs the whole transaction again, fence
// included, while the lease is held, until ctx ends or 50 attempts
// failed.
//
// Run returns nil exactly when the transaction committed. A write the
// fence admitted is safe even when the lease runs out during the COMMIT:
// the fence row stays locked until the transaction ends, and a newer
// holder's check waits behind it. Otherwise, and always after a rollback:
//
//   - a stale token (a newer holder has passed the fence) gets a
//     *fence.StaleTokenError with the highest token, matching
//     fence.ErrStaleToken, and nothing of fn ran;
//   - a lease lost before the COMMIT was sent gets an error matching
//     fence.ErrLeaseLost (the *fence.LeaseLostError, or fn's error joined
//     with it);
//   - fn's error is returned as it is, and fn's panic goes on after the
//     rollback;
//   - a COMMIT whose answer was lost (a broken connection, ctx ending
//     while it was in flight) gets a *fence.UnknownOutcomeError, matching
//     fence.ErrUnknownOutcome only: the transaction may have committed;
//   - conflicts until ctx ended or the attempts ran out get an error
//     that is Retryable.
//
// A handle that is lost or released already gets its Err (matching
// fence.ErrLeaseLost or fence.ErrReleased) and nothing is sent; one lost
// later is cut off as above, and a newer holder's write, if there is one
// already, makes the fence refuse its token. Errors of its own come in a
// *fence.OpError ("fence/sql: check "k": stale token ..."); invalid input
// (a nil h or fn, a name not under the key, an isolation level pgx lacks)
// gets one matching fence.ErrInvalid.
func (f *Fences[Tx]) Run(ctx context.Context, h *fence.Handle, fn func(ctx context.Context, tx Tx) error, opts *RunOptions) error {
	o, name, err := f.runArgs(h, opts, fn == nil)
	if err != nil {
		return err
	}
	checks := []fenceCheck{{name, h.Token()}}
	return underLeases(ctx, []*fence.Handle{h}, name, func(work context.Context) error {
		return f.conn.attempt(ctx, work, f.row, checks, o.Isolation, fn)
	})
}

// underLeases runs attempt, retried on conflicts (see retry), with work:
// a context of ctx cancelled when any lease of hs is lost; when a handle
// holds no lease any more, the first such gets its Err and no attempt is
// made. name names the transaction in its errors.
func underLeases(ctx context.Context, hs []*fence.Handle, name string, attempt func(work context.Context) error) error {
	for _, h := range hs {
		if err := h.Err(); err != nil {
			return err
		}
	}
	work := ctx
	for _, h := range hs {
		var cancel context.CancelFunc
		work, cancel = h.Context(work)
		defer cancel()
	}
	return runResult(work, hs, name, retry(work, func() error { return attempt(work) }))
}

// runArgs checks the arguments of Run and returns the options and the
// fence row's key.
func (f *Fences[Tx]) runArgs(h *fence.Handle, opts *RunOptions, nilFn bool) (RunOptions, string, error) {
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	invalid := func(field string) error {
		return opError("transaction", o.Name, &fence.InvalidError{Field: field, Reason: "nil"})
	}
	switch {
	case f == nil:
		return o, "", invalid("fences")
	case h == nil:
		return o, "", invalid("handle")
	case nilFn:
		return o, "", invalid("fn")
	}
	name, err := fence.BoundName(h.Key(), o.Name)
	if err == nil {
		err = validWrite(name, h.Token())
	}
	if err == nil {
		err = f.conn.checkIso(o.Isolation)
	}
	if err != nil {
		return o, "", opError("transaction", h.Key(), err)
	}
	return o, name, nil
}

// runResult turns the outcome of a fenced transaction under hs (the
// first one's token named with name in an unknown outcome) into the
// result Run and RunAll document.
func runResult(work context.Context, hs []*fence.Handle, name string, err error) error {
	if err == nil {
		return nil
	}
	var lost *fence.LeaseLostError
	var isLost bool
	for _, h := range hs {
		if lost, isLost = errors.AsType[*fence.LeaseLostError](h.Err()); isLost {
			break
		}
	}
	if ce, ok := errors.AsType[*commitError](err); ok && ce.maybeApplied() {
		ue := &fence.UnknownOutcomeError{Key: name, Token: hs[0].Token(), Err: err}
		if isLost {
			// Said, not wrapped: the outcome is unknown, and matching
			// ErrLeaseLost would tell the caller nothing was committed.
			ue.Err = fmt.Errorf("%w (the lease was lost meanwhile: %v)", err, lost)
		}
		return opError("transaction", name, ue)
	}
	switch err.(type) {
	case *beginError, *commitError, *conflictError:
		err = opError("transaction", name, err)
	}
	switch {
	case !isLost || errors.Is(err, fence.ErrLeaseLost):
		return err
	case errors.Is(err, context.Canceled) && errors.Is(context.Cause(work), fence.ErrLeaseLost):
		return lost // fn's statements were cut off by the loss
	}
	return errors.Join(err, lost)
}
