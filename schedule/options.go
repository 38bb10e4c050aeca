package schedule

import (
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/guard"
)

// Options configure a Job. A nil *Options, and every zero field, means the
// documented default. New rejects impossible settings with an error
// matching fence.ErrInvalid.
type Options struct {
	// LockAtMostFor is the lease TTL of the job's lock: how long the lock
	// stays taken after its holder dies. The guard renews it while the
	// holder lives (every Guard.RenewInterval, default a third of it). It
	// must be within the Locker's range, and should be shorter than the
	// interval so that a window after a dead holder's runs elsewhere.
	// Default: half the interval, at most guard.DefaultTTL (30 s).
	LockAtMostFor time.Duration

	// LockAtLeastFor is how long the lock stays held after a run starts,
	// even when the job finishes sooner; it should exceed the clock skew
	// between replicas. 0 <= LockAtLeastFor < interval. Default: 0.
	LockAtLeastFor time.Duration

	// Offset shifts the windows from the Unix epoch: window starts are
	// Offset + k × interval after 1970-01-01T00:00:00Z. With a 24 h
	// interval, an Offset of 2 h starts each window at 02:00 UTC.
	// 0 <= Offset < interval. Default: 0.
	Offset time.Duration

	// Clock tells the time of windows, the lock hold and, through the
	// guard, renewals. Default: fence.SystemClock. Tests inject a
	// *clocktest.Fake.
	Clock fence.Clock

	// Observer receives the outcome of each attempt. Default: nil.
	Observer *Observer

	// Guard tunes the job lock's lease: RenewInterval, SafetyMargin,
	// CallTimeout, ReleaseTimeout and the guard's own Observer, as
	// documented on guard.Options. Its TTL, Clock and AcquireTimeout must
	// be zero: they come from LockAtMostFor and Clock, and each replica
	// tries once per window.
	Guard guard.Options
}

// settings are validated Options with defaults filled in.
type settings struct {
	interval, atLeast, offset time.Duration
	clock                     fence.Clock
	obs                       *Observer
	guard                     guard.Options
}

func invalid(field, format string, args ...any) error {
	return &fence.InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// resolve fills defaults into a copy of o and validates it for interval.
// The guard options are validated by guard.New.
func resolve(interval time.Duration, o *Options) (settings, error) {
	var in Options
	if o != nil {
		in = *o
	}
	s := settings{interval: interval, atLeast: in.LockAtLeastFor, offset: in.Offset}
	switch {
	case interval <= 0:
		return s, invalid("interval", "%v is not positive", interval)
	case in.Guard.TTL != 0:
		return s, invalid("Guard.TTL", "must be zero: set LockAtMostFor")
	case in.Guard.Clock != nil:
		return s, invalid("Guard.Clock", "must be nil: set Options.Clock")
	case in.Guard.AcquireTimeout != 0:
		return s, invalid("Guard.AcquireTimeout", "must be zero: replicas try once per window")
	case in.LockAtMostFor < 0:
		return s, invalid("LockAtMostFor", "%v is negative", in.LockAtMostFor)
	case in.LockAtLeastFor < 0 || in.LockAtLeastFor >= interval:
		return s, invalid("LockAtLeastFor", "%v is outside [0, interval %v)", in.LockAtLeastFor, interval)
	case in.Offset < 0 || in.Offset >= interval:
		return s, invalid("Offset", "%v is outside [0, interval %v)", in.Offset, interval)
	}
	ttl := in.LockAtMostFor
	if ttl == 0 {
		ttl = min(interval/2, guard.DefaultTTL)
	}
	if ttl <= 0 {
		return s, invalid("LockAtMostFor", "interval %v is too short for the default", interval)
	}
	s.clock = driver.ClockOrSystem(in.Clock)
	s.obs = in.Observer
	s.guard = in.Guard
	s.guard.TTL = ttl
	s.guard.Clock = s.clock
	return s, nil
}
