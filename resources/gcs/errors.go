package gcs

import (
	"errors"
	"fmt"
)

// ErrBodyConsumed matches the error Upload returns when the write must be
// retried but its body, a plain io.Reader, was already sent. See
// BodyConsumedError.
var ErrBodyConsumed = errors.New("fence: upload must be retried but its body cannot be read again")

// BodyConsumedError reports that an Upload with a body that is not an
// io.Seeker failed in a way that needs another attempt (the object changed
// between the token check and the write, a 429 or 5xx answer, or a lost
// answer that turned out not to be applied). The object was not changed by
// this call; upload again with a fresh body.
type BodyConsumedError struct {
	// Key is the object's key.
	Key string
	// Err is the failure of the attempt that used the body up.
	Err error
}

func (e *BodyConsumedError) Error() string {
	return fmt.Sprintf("fence: upload of %q must be retried but its body cannot be read again: %v", e.Key, e.Err)
}

// Is makes errors.Is(err, ErrBodyConsumed) true.
func (e *BodyConsumedError) Is(target error) bool { return target == ErrBodyConsumed }

// Unwrap returns the failure of the attempt.
func (e *BodyConsumedError) Unwrap() error { return e.Err }
