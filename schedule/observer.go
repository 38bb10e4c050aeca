package schedule

import (
	"time"

	"github.com/fencekit/fence"
)

// Outcome is what one replica's attempt at one window came to.
type Outcome int

// Outcomes of an attempt.
const (
	// Ran: this replica ran the job for the window, the first run of it.
	// The attempt's error is the job's error, or a lost lease
	// (fence.ErrLeaseLost), if any; AttemptEvent.Finished tells whether
	// the run finished.
	Ran Outcome = iota + 1
	// Busy: another replica held the job's lock (with RetryWithin, until
	// the window's allowance ended); nothing was done.
	Busy
	// Done: nothing is left to do for the window: its run finished, or
	// it was reported Missed, or (RetryWithin 0) it was started by a
	// replica. Nothing was done.
	Done
	// Failed: the attempt failed before the job could run: a store
	// error, a lost lease, an invalid key or TTL, a closed session, or
	// the end of the ctx given to Run or Attempt while it waited for the
	// lock (Err then matches context.Canceled, say, when the replica is
	// being stopped). The window is not run by this replica; another may
	// run it.
	Failed
	// Retried: this replica ran the job again for a window whose earlier
	// run did not finish (RetryWithin). The error is as for Ran.
	Retried
	// Missed: the window was started but no run of it finished, and its
	// allowance (RetryWithin) has passed: it will not run. Reported once
	// per window, by the replica that finds it so: one that takes the
	// job's lock after the allowance in the same window, or the one that
	// starts the next window.
	Missed
)

// String returns "ran", "busy", "done", "failed", "retried" or
// "missed".
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
	case Retried:
		return "retried"
	case Missed:
		return "missed"
	}
	return "unknown"
}

// Observer receives the outcome of each attempt, for metrics, logs and
// alerts: what the lease events of the session's Locker do not tell (the
// window, and whether it ran, finished or was found done). A nil Observer
// or nil field is skipped. Calls are synchronous and must not block. The
// lease events of the job's lock (each attempt, renewal, loss and
// release) go to the observer of the session's Locker
// (fence.Locker.SetObserver). See "Alerts and metrics" in the package doc
// for what to count.
type Observer struct {
	// Attempted is called after each attempt at a window, and when an
	// attempt finds an earlier window missed (an event of its own, with
	// that window and Outcome Missed).
	Attempted func(AttemptEvent)
}

// AttemptEvent describes one replica's attempt at one window.
type AttemptEvent struct {
	// Name is the job's name.
	Name string
	// Window is the start of the window, in UTC.
	Window  time.Time
	Outcome Outcome
	// Finished is true when the job ran (Ran or Retried) and returned
	// while its context was live (the lease held, the caller not
	// stopped), and the window was then marked done: no replica runs it
	// again. A run that did not finish was interrupted; with RetryWithin
	// another replica runs the window again within the allowance. A job
	// that returned an error has finished too: Err is its error.
	Finished bool
	// Lease is the job lock's lease as last renewed, when the attempt
	// took it (Ran, Retried, Done, Missed, and Failed after taking it);
	// the zero Lease otherwise. The lock is released by the time of the
	// event, except for a Missed event reported by the replica that
	// starts the next window: it still holds the lock, and runs next.
	Lease fence.Lease
	// Err is the job's error or the failure; nil when all went well.
	// For a run it also carries a lost lease (fence.ErrLeaseLost) and a
	// failure to mark the window done.
	Err error
}

func (o *Observer) attempted(e AttemptEvent) {
	if o != nil && o.Attempted != nil {
		o.Attempted(e)
	}
}
