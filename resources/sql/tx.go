package sql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fencekit/fence/internal/backoff"
	"github.com/fencekit/fence/internal/sqlitefile"
)

// maxTxAttempts bounds the attempts made at one transaction, besides the
// context.
const maxTxAttempts = 50

// txBackoff is the wait between attempts: from 2ms, doubling up to
// 250ms, each drawn at random from its upper half.
var txBackoff = backoff.Policy{First: 2 * time.Millisecond, Max: 250 * time.Millisecond}

// rollbackTimeout bounds a rollback, which runs even when ctx is done.
const rollbackTimeout = 5 * time.Second

// conflictError reports that a transaction was given up that kept failing
// with a conflict (a serialization failure, a deadlock, a lock wait
// timeout, SQLITE_BUSY) because ctx ended or maxTxAttempts attempts
// failed. Nothing it ran was committed. It unwraps to the last conflict,
// so Retryable reports true for it, and to the context's error.
type conflictError struct {
	// Attempts is the number of attempts made.
	Attempts int
	// Err is the last conflict.
	Err error
	// Cause is why retrying stopped: the context's cause, or nil when the
	// attempts ran out.
	Cause error
}

// Error says how many attempts failed, why retrying stopped and the last
// conflict.
func (e *conflictError) Error() string {
	msg := fmt.Sprintf("transaction failed with a conflict %d times", e.Attempts)
	if e.Cause != nil {
		msg += " (stopped: " + e.Cause.Error() + ")"
	}
	return msg + ": " + e.Err.Error()
}

// Unwrap returns the last conflict and the cause.
func (e *conflictError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// Retryable reports whether err is a conflict that running the whole
// transaction again can resolve, for callers of Check who run their own
// transactions (Run retries these itself, and its error after it gave up
// is Retryable too): PostgreSQL's serialization_failure
// (40001) and deadlock_detected (40P01), SQLite's SQLITE_BUSY and
// SQLITE_LOCKED (with any extended code), and MySQL's ER_LOCK_DEADLOCK
// (1213, the transaction was rolled back), ER_LOCK_WAIT_TIMEOUT (1205:
// InnoDB rolled back the statement only, and the retry rolls back the
// rest) and MariaDB's ER_CHECKREAD (1020, a snapshot-isolation
// conflict). A stale token is not.
func Retryable(err error) bool {
	if n, ok := mysqlErrno(err); ok {
		return n == erLockDeadlock || n == erLockWait || n == erCheckRead
	}
	var state interface{ SQLState() string }
	if errors.As(err, &state) {
		s := state.SQLState()
		return s == "40001" || s == "40P01"
	}
	return sqlitefile.Busy(err)
}

// beginError is a failed BEGIN.
type beginError struct{ err error }

func (e *beginError) Error() string { return "begin: " + e.err.Error() }

func (e *beginError) Unwrap() error { return e.err }

// commitError is a failed COMMIT.
type commitError struct{ err error }

func (e *commitError) Error() string { return "commit: " + e.err.Error() }

func (e *commitError) Unwrap() error { return e.err }

// maybeApplied reports whether the failed COMMIT may have been applied: it
// was sent, and no answer of the database says that it failed.
func (e *commitError) maybeApplied() bool {
	err := e.err
	var pgErr *pgconn.PgError
	var code interface{ Code() int } // SQLite's answer
	_, isMySQL := mysqlErrno(err)
	switch {
	case errors.As(err, &pgErr), errors.As(err, &code), isMySQL:
		return false // the database answered: a failed COMMIT rolls back
	case errors.Is(err, pgx.ErrTxCommitRollback):
		return false // PostgreSQL answered ROLLBACK
	case errors.Is(err, sql.ErrTxDone), err == context.Canceled, err == context.DeadlineExceeded:
		// database/sql found ctx done and did not send the COMMIT (it
		// returns ctx.Err() itself; drivers wrap theirs).
		return false
	case errors.Is(err, pgconn.ErrConnClosed):
		// pgx (v5.12) also says "conn closed", and SafeToRetry, when the
		// connection broke while it read the answer to a COMMIT it sent.
		return true
	case pgconn.SafeToRetry(err):
		return false // pgx did not send it
	}
	return true
}

// callRollingBack calls fn and rolls back when it fails or panics.
func callRollingBack[T any](ctx context.Context, tx T, fn func(context.Context, T) error, rollback func()) (err error) {
	ok := false
	defer func() {
		if !ok {
			rollback()
		}
	}()
	if err := fn(ctx, tx); err != nil {
		return err
	}
	ok = true
	return nil
}

// retry calls attempt until it succeeds, fails with an error that is not
// Retryable, ctx is done or maxTxAttempts attempts failed. An attempt
// after a conflict that ctx ended (its BEGIN failed, or fn failed with
// ctx's error) also ends in a *conflictError: retrying stopped because ctx
// ended, and nothing was committed. A failed COMMIT is always returned as
// it is, for the Resource to settle.
func retry(ctx context.Context, attempt func() error) error {
	var conflict error // the last conflict
	for n := 1; ; n++ {
		err := attempt()
		if err == nil {
			return nil
		}
		if !Retryable(err) {
			if conflict == nil || ctx.Err() == nil {
				return err
			}
			switch err.(type) {
			case *beginError:
				return &conflictError{Attempts: n - 1, Err: conflict, Cause: context.Cause(ctx)}
			case *commitError:
				return err
			}
			if errors.Is(err, ctx.Err()) {
				return &conflictError{Attempts: n, Err: conflict, Cause: context.Cause(ctx)}
			}
			return err
		}
		conflict = err
		if n >= maxTxAttempts {
			return &conflictError{Attempts: n, Err: err}
		}
		if backoff.Sleep(ctx, txBackoff.Delay(n)) != nil {
			return &conflictError{Attempts: n, Err: err, Cause: context.Cause(ctx)}
		}
	}
}
