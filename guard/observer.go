package guard

import "github.com/fencekit/fence"

// Observer receives the guard's events, for metrics and logs: the events
// of the fence.Session under the guard (see fence.Observer). For one call
// of Do they arrive in order: AcquireAttempt for each attempt, Acquired
// once the lease is held, Renewed for each renewal, LeaseLost at most
// once, Released once.
type Observer = fence.Observer

// The events and outcomes are the session's.
type (
	Outcome             = fence.Outcome
	AcquireAttemptEvent = fence.AcquireAttemptEvent
	AcquiredEvent       = fence.AcquiredEvent
	RenewedEvent        = fence.RenewedEvent
	LeaseLostEvent      = fence.LeaseLostEvent
	ReleasedEvent       = fence.ReleasedEvent
)

// Outcomes of an acquisition attempt (see fence.Outcome).
const (
	Acquired = fence.Acquired
	Busy     = fence.Busy
	Failed   = fence.Failed
)
