package guard

import (
	"fmt"
	"time"

	"github.com/fencekit/fence"
)

// Defaults of Options. Fields that depend on the TTL are given as a
// fraction of it.
const (
	// DefaultTTL is the lease duration when Options.TTL is zero.
	DefaultTTL = 30 * time.Second
	// DefaultReleaseTimeout bounds the release call when
	// Options.ReleaseTimeout is zero.
	DefaultReleaseTimeout = 5 * time.Second
	// DefaultMaxCallTimeout caps the default Options.CallTimeout, which is
	// otherwise TTL/3.
	DefaultMaxCallTimeout = 5 * time.Second
	// DefaultBackoffMin is the first backoff step when Options.BackoffMin
	// is zero (lowered to BackoffMax if that is smaller).
	DefaultBackoffMin = 100 * time.Millisecond
	// DefaultBackoffMax is the largest backoff step when
	// Options.BackoffMax is zero.
	DefaultBackoffMax = 5 * time.Second
)

// Options configure a Guard. A nil *Options, and every zero field, means
// the documented default. New rejects impossible settings with an error
// matching fence.ErrInvalid.
type Options struct {
	// TTL is the lease duration asked of the Locker; each renewal extends
	// the lease by TTL again. It must be within the Locker's range.
	// Default: DefaultTTL (30 s).
	TTL time.Duration

	// AcquireTimeout selects the acquisition mode. Zero (the default)
	// tries once: when the key is busy, Do returns at once with an error
	// matching fence.ErrHeld, so a duplicate job can skip its turn. A
	// positive value waits: Do retries with jittered exponential backoff
	// (BackoffMin to BackoffMax) until it gets the lease or AcquireTimeout
	// has passed on Clock, then returns the last error (matching
	// fence.ErrHeld when the key was still busy). The caller's ctx bounds
	// the wait too; the guard never waits longer than AcquireTimeout,
	// however long ctx allows. Negative values are invalid.
	AcquireTimeout time.Duration

	// BackoffMin and BackoffMax bound the jittered exponential backoff
	// between acquisition attempts in wait mode, and between retries of
	// a renewal that failed transiently (renew retries are further capped
	// at RenewInterval). Each step is drawn at random from [d/2, d], where
	// d doubles from BackoffMin up to BackoffMax. Defaults:
	// DefaultBackoffMin (100 ms, or BackoffMax if smaller) and
	// DefaultBackoffMax (5 s). 0 < BackoffMin <= BackoffMax.
	BackoffMin, BackoffMax time.Duration

	// RenewInterval is the time between the end of one successful
	// renewal and the start of the next. Default: TTL/3. It must not
	// exceed TTL/2, and must be shorter than TTL - SafetyMargin so that a
	// renewal is tried before the safety deadline.
	RenewInterval time.Duration

	// SafetyMargin is subtracted from the lease's end to give the local
	// safety deadline: the send time of the last successful acquire or
	// renew call, read from Clock before the call, plus TTL, minus
	// SafetyMargin. If no renewal has succeeded by then, the work context
	// is cancelled with a *fence.LeaseLostError. The margin absorbs clock
	// drift between this process and the store, and the time fn needs to
	// notice the cancellation. Default (when zero): TTL/10. A negative
	// margin, or one of TTL or more, is invalid.
	SafetyMargin time.Duration

	// CallTimeout bounds each Acquire, Renew and Inspect call: each gets
	// its own context with this timeout. It is measured by the context
	// package on the system clock, not on Clock, because it bounds a
	// network call. A call that hangs past the safety deadline does not
	// delay the lease-lost cancellation: the deadline timer fires while
	// the call is in flight. Default: TTL/3, at most
	// DefaultMaxCallTimeout (5 s). Must be positive.
	CallTimeout time.Duration

	// ReleaseTimeout bounds the release call made when fn returns or
	// panics. Its context is derived with context.WithoutCancel from the
	// caller's ctx, so the release runs even when ctx is done. Measured on
	// the system clock like CallTimeout. Default: DefaultReleaseTimeout
	// (5 s). Must be positive.
	ReleaseTimeout time.Duration

	// Clock times renewals, backoff, the acquire timeout and the safety
	// deadline. Default: fence.SystemClock, whose times carry Go's
	// monotonic reading, so every duration the guard computes uses the
	// monotonic clock and is immune to wall-clock steps. Tests inject a
	// *clocktest.Fake.
	Clock fence.Clock

	// Observer receives events for metrics and logs. Default: nil, which
	// costs nothing.
	Observer *Observer
}

// settings are validated Options with defaults filled in.
type settings struct {
	ttl, acquireTimeout         time.Duration
	backoffMin, backoffMax      time.Duration
	renewInterval, safetyMargin time.Duration
	callTimeout, releaseTimeout time.Duration
	clock                       fence.Clock
	obs                         *Observer
}

func invalid(field, format string, args ...any) error {
	return &fence.InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// resolve fills defaults into a copy of o and validates the result.
func resolve(o *Options) (settings, error) {
	var in Options
	if o != nil {
		in = *o
	}
	s := settings{
		ttl:            in.TTL,
		acquireTimeout: in.AcquireTimeout,
		backoffMin:     in.BackoffMin,
		backoffMax:     in.BackoffMax,
		renewInterval:  in.RenewInterval,
		safetyMargin:   in.SafetyMargin,
		callTimeout:    in.CallTimeout,
		releaseTimeout: in.ReleaseTimeout,
		clock:          fence.ClockOrSystem(in.Clock),
		obs:            in.Observer,
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.ttl < 0 {
		return s, invalid("TTL", "%v is negative", s.ttl)
	}
	if s.acquireTimeout < 0 {
		return s, invalid("AcquireTimeout", "%v is negative", s.acquireTimeout)
	}
	if s.backoffMax == 0 {
		s.backoffMax = DefaultBackoffMax
	}
	if s.backoffMin == 0 {
		s.backoffMin = min(DefaultBackoffMin, s.backoffMax)
	}
	if s.backoffMin <= 0 || s.backoffMax <= 0 {
		return s, invalid("BackoffMin", "backoff steps must be positive (min %v, max %v)", s.backoffMin, s.backoffMax)
	}
	if s.backoffMin > s.backoffMax {
		return s, invalid("BackoffMin", "%v exceeds BackoffMax %v", s.backoffMin, s.backoffMax)
	}
	if s.renewInterval == 0 {
		s.renewInterval = s.ttl / 3
	}
	if s.renewInterval <= 0 {
		return s, invalid("RenewInterval", "%v is not positive", s.renewInterval)
	}
	if s.renewInterval > s.ttl/2 {
		return s, invalid("RenewInterval", "%v exceeds TTL/2 (%v)", s.renewInterval, s.ttl/2)
	}
	if s.safetyMargin == 0 {
		s.safetyMargin = s.ttl / 10
	}
	if s.safetyMargin < 0 || s.safetyMargin >= s.ttl {
		return s, invalid("SafetyMargin", "%v is outside [0, TTL %v)", s.safetyMargin, s.ttl)
	}
	if s.renewInterval >= s.ttl-s.safetyMargin {
		return s, invalid("SafetyMargin", "the safety deadline (TTL %v - margin %v) comes before the first renewal at %v", s.ttl, s.safetyMargin, s.renewInterval)
	}
	if s.callTimeout == 0 {
		s.callTimeout = min(s.ttl/3, DefaultMaxCallTimeout)
	}
	if s.callTimeout <= 0 {
		return s, invalid("CallTimeout", "%v is not positive", s.callTimeout)
	}
	if s.releaseTimeout == 0 {
		s.releaseTimeout = DefaultReleaseTimeout
	}
	if s.releaseTimeout <= 0 {
		return s, invalid("ReleaseTimeout", "%v is not positive", s.releaseTimeout)
	}
	return s, nil
}
