package sql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencekit/fence"
)

// RunOptions are the optional settings of the fenced transactions: Run and
// RunPgx under a handle the caller holds, Locked and LockedPgx under a
// lock they take. A nil *RunOptions means every default.
type RunOptions struct {
	// Name is the fence row's key: the lock's key, or a name under it
	// (key + "/" + more, checked by fence.BoundName), so that a token of
	// one lock cannot pass the fence of another lock's data. Default: the
	// lock's key.
	Name string

	// AcquireTimeout selects how Locked and LockedPgx take the lock, as
	// fence.LockedOptions.AcquireTimeout: zero (the default) tries once,
	// and a busy key gets an error matching fence.ErrHeld; a positive
	// value waits up to AcquireTimeout. Negative values are invalid. Run
	// and RunPgx take no lock and ignore it.
	AcquireTimeout time.Duration

	// PgxTxOptions begin the transactions of RunPgx and LockedPgx.
	// Default: the zero pgx.TxOptions (the server's default isolation
	// level, READ COMMITTED unless configured otherwise).
	PgxTxOptions pgx.TxOptions

	// TxOptions begin the transactions of Run and Locked (database/sql).
	// Default: nil, the driver's defaults.
	TxOptions *sql.TxOptions
}

// PgxBatcher is the part of *pgxpool.Pool and *pgx.Conn that RunPgx and
// LockedPgx use: they send BEGIN and the fence in one batch. A pgx.Tx has
// the method too but is refused with fence.ErrInvalid: the fenced
// transaction is one of its own, not nested in another.
type PgxBatcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// RunPgx runs fn in a fenced pgx transaction under h: the fence row of
// h's key (or opts.Name) is checked and advanced with h's token first,
// then fn runs with tx, and the transaction commits if fn returns nil.
// opts may be nil.
//
// BEGIN and the fence go to the server in one batch (pgx.Batch.BeginTx
// and the statement of QueueCheck), so the fence costs no round trip
// beyond those of a plain transaction: one for BEGIN and the fence, fn's
// own, one for COMMIT. fn's ctx is cancelled when h loses its lease
// (context.Cause is then the *fence.LeaseLostError) or ctx is done; fn
// must run its statements on tx with that ctx, and do nothing outside tx
// that cannot be repeated: a conflict (see Retryable) runs the whole
// transaction again, as RunPgxTx does, while the lease is held.
//
// RunPgx returns nil exactly when the transaction committed. A write the
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
//   - fn's error is returned as it is;
//   - a COMMIT whose answer was lost (a broken connection, ctx ending
//     while it was in flight) gets a *fence.UnknownOutcomeError, matching
//     fence.ErrUnknownOutcome only: the transaction may have committed.
//
// A handle that is lost or released already gets its Err (matching
// fence.ErrLeaseLost or fence.ErrReleased) and nothing is sent; one lost
// later is cut off as above, and a newer holder's write, if there is one
// already, makes the fence refuse its token. Errors of its own come in a *fence.OpError
// ("fence/sql: check "k": stale token ..."); invalid input (a nil h, db
// or fn, a pgx.Tx as db, a name not under the key) gets one matching
// fence.ErrInvalid.
func (f *Fences) RunPgx(ctx context.Context, h *fence.Handle, db PgxBatcher, fn func(ctx context.Context, tx pgx.Tx) error, opts *RunOptions) error {
	if err := f.noPgx("transaction", opts.name()); err != nil {
		return err
	}
	o, name, err := f.runArgs(h, opts, db == nil, fn == nil)
	if err == nil {
		if _, isTx := db.(pgx.Tx); isTx {
			err = opError("transaction", name, &fence.InvalidError{Field: "db", Reason: "a pgx.Tx: RunPgx begins its own transaction; pass the pool or connection"})
		}
	}
	if err != nil {
		return err
	}
	return underLease(ctx, h, name, func(work context.Context) error {
		return f.attemptPgx(ctx, work, db, name, h.Token(), o.PgxTxOptions, fn)
	})
}

// Run is RunPgx for database/sql (PostgreSQL through pgx's stdlib,
// SQLite or MySQL): the fence is Check, the first statement of the
// transaction (two statements in MySQL).
// database/sql sends one statement at a time, so the fence costs one
// round trip of its own; use RunPgx where pgx is at hand. The transaction
// is begun with fn's ctx, so database/sql rolls it back when the lease is
// lost.
func (f *Fences) Run(ctx context.Context, h *fence.Handle, db *sql.DB, fn func(ctx context.Context, tx *sql.Tx) error, opts *RunOptions) error {
	o, name, err := f.runArgs(h, opts, db == nil, fn == nil)
	if err != nil {
		return err
	}
	return underLease(ctx, h, name, func(work context.Context) error {
		return f.attempt(work, db, name, h.Token(), o.TxOptions, fn)
	})
}

// underLease runs attempt, retried as RunPgxTx retries, with work: a
// context of ctx cancelled when h's lease is lost; a handle that holds no
// lease any more gets its Err and no attempt.
func underLease(ctx context.Context, h *fence.Handle, name string, attempt func(work context.Context) error) error {
	if err := h.Err(); err != nil {
		return err
	}
	work, cancel := h.Context(ctx)
	defer cancel()
	return runResult(work, h, name, retry(work, func() error { return attempt(work) }))
}

// runArgs checks the arguments common to the fenced transactions and
// returns the options and the fence row's key.
func (f *Fences) runArgs(h *fence.Handle, opts *RunOptions, nilDB, nilFn bool) (RunOptions, string, error) {
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
	case nilDB:
		return o, "", invalid("db")
	case nilFn:
		return o, "", invalid("fn")
	}
	name, err := fence.BoundName(h.Key(), o.Name)
	if err == nil {
		err = validWrite(name, h.Token())
	}
	if err != nil {
		return o, "", opError("transaction", h.Key(), err)
	}
	return o, name, nil
}

// attemptPgx is one attempt of RunPgx: BEGIN and the fence in one batch
// sent with work, fn, and the COMMIT, which is sent with ctx (a lease lost
// while the COMMIT is in flight does not cut it off: the fence already
// admitted the write) after a last look at work.
func (f *Fences) attemptPgx(ctx, work context.Context, db PgxBatcher, name string, token fence.Token, txOpts pgx.TxOptions, fn func(context.Context, pgx.Tx) error) error {
	b := &pgx.Batch{}
	b.BeginTx(txOpts)
	var checked bool
	b.Queue(f.raise, name, int64(token)).QueryRow(func(row pgx.Row) error {
		checked = true
		return opError("check", name, f.raised(row, name, token))
	})
	br := db.SendBatch(work, b)
	tx := br.Tx()
	rollback := func() {
		if tx == nil {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		_ = tx.Rollback(rctx)
	}
	if err := br.Close(); err != nil {
		rollback()
		if checked {
			return err // the fence's verdict, or its failure
		}
		return &beginError{err}
	}
	if tx == nil {
		return &beginError{errors.New("the batch began no transaction (db's SendBatch does not honour pgx.Batch.BeginTx)")}
	}
	if err := callRollingBack(work, tx, fn, rollback); err != nil {
		return err
	}
	if work.Err() != nil {
		rollback()
		return context.Cause(work)
	}
	if err := tx.Commit(ctx); err != nil {
		return &commitError{err: err}
	}
	return nil
}

// attempt is one attempt of Run. database/sql ties the transaction to the
// context it was begun with; work ending rolls it back.
func (f *Fences) attempt(work context.Context, db *sql.DB, name string, token fence.Token, txOpts *sql.TxOptions, fn func(context.Context, *sql.Tx) error) error {
	tx, err := db.BeginTx(work, txOpts)
	if err != nil {
		return &beginError{err}
	}
	rollback := func() { _ = tx.Rollback() }
	if err := f.Check(work, tx, name, token); err != nil {
		rollback()
		return err
	}
	if err := callRollingBack(work, tx, fn, rollback); err != nil {
		return err
	}
	if work.Err() != nil {
		rollback()
		return context.Cause(work)
	}
	if err := tx.Commit(); err != nil {
		return &commitError{err: err}
	}
	return nil
}

// runResult turns the outcome of a fenced transaction into the result
// RunPgx documents.
func runResult(work context.Context, h *fence.Handle, name string, err error) error {
	if err == nil {
		return nil
	}
	lost, isLost := errors.AsType[*fence.LeaseLostError](h.Err())
	if ce, ok := errors.AsType[*commitError](err); ok && ce.maybeApplied() {
		ue := &fence.UnknownOutcomeError{Key: name, Token: h.Token(), Err: err}
		if isLost {
			// Said, not wrapped: the outcome is unknown, and matching
			// ErrLeaseLost would tell the caller nothing was committed.
			ue.Err = fmt.Errorf("%w (the lease was lost meanwhile: %v)", err, lost)
		}
		return opError("transaction", name, ue)
	}
	switch err.(type) {
	case *beginError, *commitError, *ConflictError:
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
