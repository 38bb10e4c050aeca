package election

import (
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/guard"
)

// Options configure a Candidate. A nil *Options, and every zero field,
// means the documented default. New rejects impossible settings with an
// error matching fence.ErrInvalid.
type Options struct {
	// TTL is the lease duration of a term; the guard renews the lease
	// every Guard.RenewInterval (default TTL/3). It bounds how long the
	// key stays taken after a leader dies without releasing it. It must be
	// within the Locker's range. Default: guard.DefaultTTL (30 s).
	TTL time.Duration

	// RetryInterval is the time a follower waits between two attempts to
	// take the key. Each wait is drawn at random from [RetryInterval/2,
	// RetryInterval], so that candidates started together spread out.
	// After a leader dies, a follower takes over within about TTL +
	// RetryInterval. Default: TTL/3.
	RetryInterval time.Duration

	// Holdoff is how long a candidate waits before campaigning again after
	// its term ended by Resign or by its function returning. It should
	// exceed RetryInterval so that another candidate, whose next attempt
	// comes at most RetryInterval later, takes over first. Default:
	// 2 × RetryInterval.
	Holdoff time.Duration

	// Clock times the waits between attempts and, through the guard,
	// renewals and the safety deadline. Default: fence.SystemClock. Tests
	// inject a *clocktest.Fake.
	Clock fence.Clock

	// Observer receives elections, demotions and failures. Default: nil.
	Observer *Observer

	// Guard tunes each term's lease: RenewInterval, SafetyMargin,
	// CallTimeout, ReleaseTimeout and the guard's own Observer (attempts,
	// renewals, losses, releases), as documented on guard.Options. Its
	// TTL and Clock must be zero (they come from the fields above) and so
	// must AcquireTimeout (a candidate tries once per attempt and waits
	// RetryInterval between attempts).
	Guard guard.Options
}

// settings are validated Options with defaults filled in.
type settings struct {
	retry, holdoff time.Duration
	clock          fence.Clock
	obs            *Observer
	guard          guard.Options
}

func invalid(field, format string, args ...any) error {
	return &fence.InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// resolve fills defaults into a copy of o and validates the result. The
// guard options are validated by guard.New.
func resolve(o *Options) (settings, error) {
	var in Options
	if o != nil {
		in = *o
	}
	var s settings
	switch {
	case in.Guard.TTL != 0:
		return s, invalid("Guard.TTL", "must be zero: set Options.TTL")
	case in.Guard.Clock != nil:
		return s, invalid("Guard.Clock", "must be nil: set Options.Clock")
	case in.Guard.AcquireTimeout != 0:
		return s, invalid("Guard.AcquireTimeout", "must be zero: candidates retry every RetryInterval")
	case in.TTL < 0:
		return s, invalid("TTL", "%v is negative", in.TTL)
	case in.RetryInterval < 0:
		return s, invalid("RetryInterval", "%v is negative", in.RetryInterval)
	case in.Holdoff < 0:
		return s, invalid("Holdoff", "%v is negative", in.Holdoff)
	}
	ttl := in.TTL
	if ttl == 0 {
		ttl = guard.DefaultTTL
	}
	s.retry = in.RetryInterval
	if s.retry == 0 {
		s.retry = ttl / 3
	}
	if s.retry <= 0 {
		return s, invalid("RetryInterval", "TTL %v is too short for the default", ttl)
	}
	s.holdoff = in.Holdoff
	if s.holdoff == 0 {
		s.holdoff = 2 * s.retry
	}
	s.clock = driver.ClockOrSystem(in.Clock)
	s.obs = in.Observer
	s.guard = in.Guard
	s.guard.TTL = ttl
	s.guard.Clock = s.clock
	return s, nil
}
