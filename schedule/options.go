package schedule

import (
	"fmt"
	"time"

	"github.com/fencekit/fence"
)

// Options configure a Job. A nil *Options, and every zero field, means the
// documented default. New rejects impossible settings with an error
// matching fence.ErrInvalid. The lease of the job's lock (its TTL,
// ShedLock's lockAtMostFor, its renewals and clock) is the session's: see
// fence.SessionOptions.
type Options struct {
	// LockAtLeastFor is how long the lock stays held after a run starts,
	// even when the job finishes sooner; it should exceed the clock skew
	// between replicas. 0 <= LockAtLeastFor < interval. Default: 0.
	LockAtLeastFor time.Duration

	// Offset shifts the windows from the Unix epoch: window starts are
	// Offset + k × interval after 1970-01-01T00:00:00Z. With a 24 h
	// interval, an Offset of 2 h starts each window at 02:00 UTC.
	// 0 <= Offset < interval. Default: 0.
	Offset time.Duration

	// RetryWithin is how long after a window's start a run of it may
	// start again when an earlier run did not finish (its replica
	// crashed, was stopped or lost the lease): another replica, or the
	// same one, then runs the window again under a new token, and the
	// replicas that found the lock busy wait for it until then. A window
	// whose run finished, with or without an error, is not run again. 0
	// runs each window at most once: a run that did not finish loses its
	// window. 0 <= RetryWithin < interval. Default: 0. See "Windows that
	// are not lost" in the package doc.
	RetryWithin time.Duration

	// Observer receives the outcome of each attempt. Default: nil.
	Observer *Observer
}

// settings are validated Options with defaults filled in.
type settings struct {
	interval, atLeast, offset, retry time.Duration
	clock                            fence.Clock
	obs                              *Observer
}

func invalid(field, format string, args ...any) error {
	return &fence.InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// resolve fills defaults into a copy of o and validates it for interval.
func resolve(interval time.Duration, o *Options) (settings, error) {
	var in Options
	if o != nil {
		in = *o
	}
	s := settings{interval: interval, atLeast: in.LockAtLeastFor, offset: in.Offset, retry: in.RetryWithin, obs: in.Observer}
	switch {
	case interval <= 0:
		return s, invalid("interval", "%v is not positive", interval)
	case in.LockAtLeastFor < 0 || in.LockAtLeastFor >= interval:
		return s, invalid("LockAtLeastFor", "%v is outside [0, interval %v)", in.LockAtLeastFor, interval)
	case in.Offset < 0 || in.Offset >= interval:
		return s, invalid("Offset", "%v is outside [0, interval %v)", in.Offset, interval)
	case in.RetryWithin < 0 || in.RetryWithin >= interval:
		return s, invalid("RetryWithin", "%v is outside [0, interval %v)", in.RetryWithin, interval)
	}
	return s, nil
}
