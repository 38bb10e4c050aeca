package fence

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Every error returned by a Locker, a Resource or the guard
// for one of these conditions matches the sentinel with errors.Is, and most
// are also a typed error carrying the details, reachable with errors.As.
var (
	// ErrHeld: the lock is held by another owner (Acquire). See HeldError.
	ErrHeld = errors.New("fence: lock held by another owner")
	// ErrNotHeld: the caller's lease is no longer held: it expired, was
	// released, broken or taken over (Renew, Release).
	ErrNotHeld = errors.New("fence: lease not held")
	// ErrLeaseLost: a handle lost its lease while work was running; it is
	// the cause of the cancelled work context. See LeaseLostError.
	ErrLeaseLost = errors.New("fence: lease lost")
	// ErrStaleToken: a resource refused a write whose token is lower than
	// the highest it has seen. See StaleTokenError.
	ErrStaleToken = errors.New("fence: stale token")
	// ErrInvalid: a key, name, TTL, token or option is out of range. See
	// InvalidError.
	ErrInvalid = errors.New("fence: invalid input")
	// ErrCorrupt: a record in the store cannot be parsed or breaks an
	// invariant (for example a token that is not a number). Nothing is
	// written over it. See CorruptError.
	ErrCorrupt = errors.New("fence: corrupted record")
	// ErrNotFound: Resource.Get found no value (never written, or deleted).
	ErrNotFound = errors.New("fence: not found")
	// ErrUnknownOutcome: a write may or may not have been applied, and
	// reading the resource back could not settle it. See
	// UnknownOutcomeError.
	ErrUnknownOutcome = errors.New("fence: outcome unknown")
)

// HeldError reports that Acquire found the key held by another owner.
type HeldError struct {
	Key string
	// Owner is the current owner id, where the backend knows it: the raw
	// id, a secret as Lease.Owner is. Error never names it, and Format
	// prints it as its OwnerFingerprint.
	Owner string
	// Token is the holder's token, where known.
	Token Token
	// ValidUntil is when the holder's lease expires on the caller's clock,
	// where the backend knows it; zero otherwise.
	ValidUntil time.Time
}

func (e *HeldError) Error() string { return fmt.Sprintf("fence: lock %q %s", e.Key, e.detail()) }

func (e *HeldError) detail() string {
	msg := "held by another owner"
	if e.Token != 0 {
		msg += fmt.Sprintf(" (token %d)", e.Token)
	}
	if !e.ValidUntil.IsZero() {
		msg += " until " + e.ValidUntil.UTC().Format(time.RFC3339Nano)
	}
	return msg
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// StaleTokenError reports a write refused because its token is lower than
// the highest token the resource has accepted.
type StaleTokenError struct {
	// Key names what was written (a row, object or item).
	Key string
	// Token is the refused token.
	Token Token
	// Highest is the highest token the resource had accepted, where the
	// backend could read it back; 0 when unknown.
	Highest Token
}

func (e *StaleTokenError) Error() string {
	msg := fmt.Sprintf("fence: stale token %d for %q", e.Token, e.Key)
	if e.Highest != 0 {
		msg += fmt.Sprintf(" (highest seen %d)", e.Highest)
	}
	return msg
}

func (e *StaleTokenError) detail() string {
	if e.Highest == 0 {
		return fmt.Sprintf("stale token %d", e.Token)
	}
	return fmt.Sprintf("stale token %d (highest seen %d)", e.Token, e.Highest)
}

// Is makes errors.Is(err, ErrStaleToken) true.
func (e *StaleTokenError) Is(target error) bool { return target == ErrStaleToken }

// LeaseLostError reports that a lease was lost while work ran under it.
type LeaseLostError struct {
	Key   string
	Token Token
	// Err is why: a renewal that failed definitively (matching ErrNotHeld,
	// ErrInvalid or ErrCorrupt); a *ReconcileError (matching
	// ErrNotHeld) when re-reading the record after an ambiguous renewal
	// showed it free or held by another; or a *DeadlineError when
	// the local safety deadline passed while renewals failed transiently,
	// which wraps the last of those errors.
	Err error
}

func (e *LeaseLostError) Error() string {
	msg := fmt.Sprintf("fence: lease on %q (token %d) lost", e.Key, e.Token)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrLeaseLost) true.
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// Unwrap returns the reason.
func (e *LeaseLostError) Unwrap() error { return e.Err }

// InvalidError reports bad input: what was wrong and why.
type InvalidError struct {
	// Field names the input: "key", "ttl", "token", "name", an option.
	Field string
	// Reason says what is wrong, in words.
	Reason string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("fence: invalid %s: %s", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// CorruptError reports a stored record that cannot be trusted.
type CorruptError struct {
	// Key is the lock key or resource name of the record.
	Key string
	// Reason says what is wrong.
	Reason string
	// Err is the underlying parse error, if any.
	Err error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("fence: corrupted record %q: %s", e.Key, e.detail())
}

func (e *CorruptError) detail() string {
	msg := e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the underlying parse error.
func (e *CorruptError) Unwrap() error { return e.Err }

// NotFoundError reports that Resource.Get found no value under Key.
type NotFoundError struct {
	Key string
	// Tombstone is true when the name was deleted (its token is kept).
	Tombstone bool
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("fence: %q %s", e.Key, e.detail()) }

func (e *NotFoundError) detail() string {
	if e.Tombstone {
		return "not found (deleted)"
	}
	return "not found"
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// UnknownOutcomeError reports a write that may or may not have been applied:
// its request was sent but the answer was lost (no answer, a 5xx, or the
// context ended while it was in flight), and reading the resource back could
// not settle it, because the context ended, the answers kept being lost, or a
// write with a higher token has replaced the value since. It is never
// reported as a stale token, which would claim the write was refused.
// Retrying the write with the same token and value is harmless.
type UnknownOutcomeError struct {
	Key   string
	Token Token
	// Highest is the token of the write that replaced the value, when that
	// is why the outcome is unknown; 0 otherwise.
	Highest Token
	// Err is the last error.
	Err error
}

func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("fence: write of %q %s", e.Key, e.detail())
}

func (e *UnknownOutcomeError) detail() string {
	msg := fmt.Sprintf("with token %d: outcome unknown, it may have been applied", e.Token)
	if e.Highest != 0 {
		msg += fmt.Sprintf(" and then replaced by token %d", e.Highest)
	}
	if e.Highest > e.Token {
		// A newer holder wrote: whatever became of this write, the
		// resource now refuses every write with this token.
		msg += fmt.Sprintf(" (a newer holder's; the resource now refuses writes with token %d)", e.Token)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrUnknownOutcome) true.
func (e *UnknownOutcomeError) Is(target error) bool { return target == ErrUnknownOutcome }

// Unwrap returns the last error.
func (e *UnknownOutcomeError) Unwrap() error { return e.Err }

// ErrStoreMissing: the table, container or bucket a backend keeps its
// records in does not exist (it was never created: see
// Locker.Create and `fence init`). Backends wrap their store's own
// error so that it matches both.
var ErrStoreMissing = errors.New("fence: store missing")
