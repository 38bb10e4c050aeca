package schedule

import (
	"time"

	"github.com/fencekit/fence"
)

// Outcome is what one replica's attempt at one window came to.
type Outcome int

// Outcomes of an attempt.
const (
	// Ran: this replica ran the job for the window. The attempt's error
	// is the job's error, or a lost lease (fence.ErrLeaseLost), if any.
	Ran Outcome = iota + 1
	// Busy: another replica held the job's lock; nothing was done.
	Busy
	// Done: the window was already started (marked) by a replica;
	// nothing was done.
	Done
	// Failed: the attempt failed before the job could run: a store
	// error, a lost lease, an invalid key or TTL, or a closed session.
	// The window is not run by this replica; another may run it.
	Failed
)

// String returns "ran", "busy", "done" or "failed".
func (o Outcome) String() string {
	switch o {
	case Ran:
		return "ran"
	case Busy:
		return "busy"
	case Done:
		return "done"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// Observer receives the outcome of each attempt, for metrics, logs and
// alerts: what the lease events of the session's Locker do not tell (the
// window, and whether it ran or was found done). A nil Observer or nil
// field is skipped. Calls are synchronous and must not block. The lease
// events of the job's lock (each attempt, renewal, loss and release) go
// to the observer of the session's Locker (fence.Locker.SetObserver).
type Observer struct {
	// Attempted is called after each attempt at a window.
	Attempted func(AttemptEvent)
}

// AttemptEvent describes one replica's attempt at one window.
type AttemptEvent struct {
	// Name is the job's name.
	Name string
	// Window is the start of the window, in UTC.
	Window  time.Time
	Outcome Outcome
	// Lease is the job lock's lease as last renewed, when the attempt
	// took it (Ran, Done, and Failed after taking it); the zero Lease
	// otherwise. The lock is released by the time of the event.
	Lease fence.Lease
	// Err is the job's error or the failure; nil when all went well.
	Err error
}

func (o *Observer) attempted(e AttemptEvent) {
	if o != nil && o.Attempted != nil {
		o.Attempted(e)
	}
}
