package driver

import (
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/hook"
)

// ValidateKey checks a lock key or resource name as the portable types
// do: non-empty, at most maxLen bytes, valid UTF-8, and free of NUL bytes
// (which several stores cannot hold). field names it in the error ("key",
// "name"). A violation returns a *fence.InvalidError. A backend's own
// functions that take names call it first and add their own rules after.
func ValidateKey(field, key string, maxLen int) error { return hook.ValidateKey(field, key, maxLen) }

// ValidateTTL checks that min <= ttl <= max and returns a
// *fence.InvalidError naming the range otherwise.
func ValidateTTL(ttl, min, max time.Duration) error { return hook.ValidateTTL(ttl, min, max) }

// ValidateToken rejects the zero Token with a *fence.InvalidError.
func ValidateToken(t fence.Token) error { return hook.ValidateToken(uint64(t)) }

// StoreMissing wraps err, the store's own error for a missing table,
// container or bucket, so that it also matches fence.ErrStoreMissing.
func StoreMissing(err error) error { return &storeMissingError{err} }

type storeMissingError struct{ err error }

func (e *storeMissingError) Error() string        { return e.err.Error() }
func (e *storeMissingError) Unwrap() error        { return e.err }
func (e *storeMissingError) Is(target error) bool { return target == fence.ErrStoreMissing }
