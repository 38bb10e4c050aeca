package main

import (
	"errors"
	"fmt"

	"github.com/fencekit/fence"
)

// Exit statuses of fence itself. `fence run` otherwise exits with the
// command's status; see the manual.
const (
	// exitUsage: bad usage (sysexits EX_USAGE).
	exitUsage = 64
	// exitStore: the store failed or could not be reached, or holds a
	// corrupted record (sysexits EX_UNAVAILABLE).
	exitStore = 69
	// exitBusy: the key is held by another owner (sysexits EX_TEMPFAIL:
	// try again later).
	exitBusy = 75
	// exitLost: the lease was lost while the command ran.
	exitLost = 79
	// exitCannotRun and exitNotFound: the command could not be started,
	// as a shell reports it.
	exitCannotRun = 126
	exitNotFound  = 127
	// exitSignal plus a signal number: killed or interrupted by it.
	exitSignal = 128
)

// usageError is bad usage detected by fence before it touches the store.
// forms, when set, are the store URL forms to show with it: fixed text
// of the registered backends, printed as is (the scrubbing of printed
// text would take their [USER[:PASSWORD]@] for a password).
type usageError struct{ msg, forms string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// statusOf maps an error of a store operation to an exit status.
func statusOf(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue), errors.Is(err, fence.ErrInvalid):
		return exitUsage
	case errors.Is(err, fence.ErrLeaseLost):
		return exitLost
	case errors.Is(err, fence.ErrHeld):
		return exitBusy
	}
	return exitStore
}
