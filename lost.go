package fence

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrDeadlinePassed: the local safety deadline of a lease passed
	// before a renewal succeeded. See DeadlineError.
	ErrDeadlinePassed = errors.New("fence: lease safety deadline passed")
	// ErrReleased is what Handle.Err returns after Release freed the
	// lease (or after Session.Close did).
	ErrReleased = errors.New("fence: lease released")
	// ErrSessionClosed is what Lock returns on a Session that
	// was closed.
	ErrSessionClosed = errors.New("fence: session closed")
)

// DeadlineError is the reason (LeaseLostError.Err) of a lease lost because
// its local safety deadline passed while renewals failed transiently or
// hung. It matches ErrDeadlinePassed and unwraps to the last renewal error.
type DeadlineError struct {
	// Deadline is the safety deadline on the session's Clock.
	Deadline time.Time
	// Err is the last transient renewal error since the last success;
	// nil when no renewal failed.
	Err error
	// InFlight is true when a renewal (or the re-read after one) was
	// still waiting for the store when the deadline passed.
	InFlight bool
}

func (e *DeadlineError) Error() string {
	msg := "fence: lease safety deadline passed"
	switch {
	case e.Err != nil:
		msg += " after renewal failed: " + e.Err.Error()
	case e.InFlight:
		msg += " while a renewal was in flight"
	default:
		msg += " before a renewal was sent"
	}
	return msg
}

// Is makes errors.Is(err, ErrDeadlinePassed) true.
func (e *DeadlineError) Is(target error) bool { return target == ErrDeadlinePassed }

// Unwrap returns the last renewal error.
func (e *DeadlineError) Unwrap() error { return e.Err }

// ReconcileError is the reason (LeaseLostError.Err) of a lease found lost
// when the session re-read the record after a renewal with an ambiguous
// outcome: the record showed the key free, or held by another owner or
// token. It matches ErrNotHeld.
type ReconcileError struct {
	// Lease is the handle's lease.
	Lease Lease
	// Found is what Locker.Inspect returned.
	Found LockInfo
	// RenewErr is the error of the ambiguous renewal.
	RenewErr error
}

func (e *ReconcileError) Error() string {
	state := "free"
	if e.Found.Held {
		// Not the owner id: on some stores (Azure blob leases) it works as
		// a lease id, and error strings end up in logs.
		state = fmt.Sprintf("held by another owner with token %d", e.Found.Token)
	}
	return fmt.Sprintf("fence: after an ambiguous renewal (%v) the lock %q is %s, not ours (token %d)",
		e.RenewErr, e.Lease.Key, state, e.Lease.Token)
}

// Is makes errors.Is(err, ErrNotHeld) true.
func (e *ReconcileError) Is(target error) bool { return target == ErrNotHeld }

// definitive reports whether err from Renew or Inspect settles the
// question: the lease is gone (ErrNotHeld) or can never be renewed
// (ErrInvalid, ErrCorrupt). Other errors are transient or ambiguous.
func definitive(err error) bool {
	return errors.Is(err, ErrNotHeld) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrCorrupt)
}

// ours reports whether info shows lease still held.
func ours(info LockInfo, lease Lease) bool {
	return info.Held && info.Owner == lease.Owner && info.Token == lease.Token
}
