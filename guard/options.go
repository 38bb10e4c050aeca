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
	DefaultTTL = fence.DefaultTTL
	// DefaultReleaseTimeout bounds the release call when
	// Options.ReleaseTimeout is zero.
	DefaultReleaseTimeout = fence.DefaultReleaseTimeout
	// DefaultMaxCallTimeout caps the default Options.CallTimeout, which is
	// otherwise TTL/3.
	DefaultMaxCallTimeout = fence.DefaultMaxCallTimeout
	// DefaultBackoffMin is the first backoff step when Options.BackoffMin
	// is zero (lowered to BackoffMax if that is smaller).
	DefaultBackoffMin = fence.DefaultBackoffMin
	// DefaultBackoffMax is the largest backoff step when
	// Options.BackoffMax is zero.
	DefaultBackoffMax = fence.DefaultBackoffMax
	// DefaultMaxPoll caps the default Options.PollInterval, which is
	// otherwise TTL/3.
	DefaultMaxPoll = fence.DefaultMaxPoll
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
	// tries once (fence.Session.TryLock): when the key is busy, Do
	// returns at once with an error matching fence.ErrHeld, so a
	// duplicate job can skip its turn. A positive value waits
	// (fence.Session.Lock) until Do gets the lease or AcquireTimeout has
	// passed on Clock, then returns the last error (matching
	// fence.ErrHeld when the key was still busy). A waiting Do wakes when
	// the key is released (by a Do of this guard's process, or, on a
	// store that notifies, by anyone), when the holder's lease ends where
	// the store says when, or after PollInterval; Do calls of one process
	// waiting for one key get it in arrival order. The caller's ctx
	// bounds the wait too; the guard never waits longer than
	// AcquireTimeout, however long ctx allows. Negative values are
	// invalid.
	AcquireTimeout time.Duration

	// PollInterval is the longest a waiting Do sleeps on a busy key when
	// nothing wakes it sooner (see AcquireTimeout). Default: TTL/3, at
	// most DefaultMaxPoll (1 s).
	PollInterval time.Duration

	// BackoffMin and BackoffMax bound the jittered exponential backoff
	// between retries of a renewal that failed transiently (further
	// capped at RenewInterval), and between acquisition attempts in wait
	// mode that failed with a store error. Each step is drawn at random
	// from [d/2, d], where d doubles from BackoffMin up to BackoffMax.
	// Defaults: DefaultBackoffMin (100 ms, or BackoffMax if smaller) and
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

func invalid(field, format string, args ...any) error {
	return &fence.InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// resolve maps o onto the session's options, which fence.NewSession
// validates, and returns the acquire timeout.
func resolve(o *Options) (fence.SessionOptions, time.Duration, error) {
	var in Options
	if o != nil {
		in = *o
	}
	if in.AcquireTimeout < 0 {
		return fence.SessionOptions{}, 0, invalid("AcquireTimeout", "%v is negative", in.AcquireTimeout)
	}
	return fence.SessionOptions{
		TTL: in.TTL, RenewInterval: in.RenewInterval, SafetyMargin: in.SafetyMargin,
		BackoffMin: in.BackoffMin, BackoffMax: in.BackoffMax, PollInterval: in.PollInterval,
		CallTimeout: in.CallTimeout, ReleaseTimeout: in.ReleaseTimeout,
		Clock: in.Clock, Observer: in.Observer,
	}, in.AcquireTimeout, nil
}
