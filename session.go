package fence

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Defaults of SessionOptions. Fields that depend on the TTL are given as a
// fraction of it.
const (
	// DefaultTTL is the lease duration when SessionOptions.TTL is zero.
	DefaultTTL = 30 * time.Second
	// defaultReleaseTimeout bounds a release when
	// SessionOptions.ReleaseTimeout is zero.
	defaultReleaseTimeout = 5 * time.Second
	// DefaultMaxCallTimeout caps the default SessionOptions.CallTimeout,
	// which is otherwise TTL/3.
	DefaultMaxCallTimeout = 5 * time.Second
	// defaultBackoffMin is the first backoff step when
	// SessionOptions.BackoffMin is zero (lowered to BackoffMax if that is
	// smaller).
	defaultBackoffMin = 100 * time.Millisecond
	// defaultBackoffMax is the largest backoff step when
	// SessionOptions.BackoffMax is zero.
	defaultBackoffMax = 5 * time.Second
	// defaultMaxPoll caps the default SessionOptions.PollInterval, which
	// is otherwise TTL/3.
	defaultMaxPoll = time.Second
)

// SessionOptions configure a Session. A nil *SessionOptions, and every
// zero field, means the documented default. NewSession rejects impossible
// settings with an error matching ErrInvalid.
type SessionOptions struct {
	// TTL is the lease duration asked of the Locker for every handle;
	// each renewal extends a lease by TTL again. It must be within the
	// Locker's range. Default: DefaultTTL (30 s).
	TTL time.Duration

	// RenewInterval is the time between the end of one successful
	// renewal of a lease and the start of the next. The session renews
	// every lease that is due within half an interval together, so the
	// leases of a busy session fall into step and a store that renews
	// many leases in one call (PostgreSQL) gets one call per interval.
	// Default: TTL/3. It must not exceed TTL/2, and must be shorter than
	// TTL - SafetyMargin so that a renewal is tried before the safety
	// deadline, and must not be shorter than the shortest interval
	// between two writes of one key that the Locker's store sustains
	// (Cloud Storage: 1 s).
	RenewInterval time.Duration

	// SafetyMargin is subtracted from a lease's end to give its local
	// safety deadline: the send time of the last successful acquire or
	// renew call, read from Clock before the call, plus TTL, minus
	// SafetyMargin. If no renewal has succeeded by then, the handle is
	// lost with a *DeadlineError. The margin absorbs clock drift between
	// this process and the store, and the time work needs to notice.
	// Default: TTL/10. A negative margin, or one of TTL or more, is
	// invalid.
	SafetyMargin time.Duration

	// BackoffMin and BackoffMax bound the jittered exponential backoff
	// between retries of a renewal that failed transiently (further
	// capped at RenewInterval), and between the attempts of Lock that
	// failed with a store error (a busy key is not retried on a backoff:
	// see PollInterval). Each step is drawn at random from [d/2, d],
	// where d doubles from BackoffMin up to BackoffMax. Defaults:
	// 100 ms (or BackoffMax if smaller) and
	// 5 s. 0 < BackoffMin <= BackoffMax.
	BackoffMin, BackoffMax time.Duration

	// PollInterval is the longest a blocked Lock sleeps on a busy key
	// before it tries again, when nothing wakes it sooner: a release by a
	// handle of this process, a notification from a store that sends
	// them (PostgreSQL), or the holder's expiry where the store tells it.
	// Each sleep is drawn at random from [PollInterval/2, PollInterval];
	// it never doubles. Default: TTL/3, at most 1 s.
	PollInterval time.Duration

	// CallTimeout bounds each Acquire, Renew and Inspect call: each gets
	// its own context with this timeout, measured by the context package
	// on the system clock. A call that hangs past a safety deadline does
	// not delay the loss: the deadline fires while the call is in flight.
	// Default: TTL/3, at most DefaultMaxCallTimeout (5 s).
	CallTimeout time.Duration

	// ReleaseTimeout bounds each release. Default: 5 s.
	ReleaseTimeout time.Duration

	// Clock times renewals, waits and safety deadlines. Default:
	// SystemClock, whose times carry Go's monotonic reading, so every
	// duration the session computes is immune to wall-clock steps.
	// Tests inject a *clocktest.Fake.
	Clock Clock
}

// sessionSettings are validated SessionOptions with defaults filled in.
type sessionSettings struct {
	ttl                         time.Duration
	renewInterval, safetyMargin time.Duration
	backoffMin, backoffMax      time.Duration
	poll                        time.Duration
	callTimeout, releaseTimeout time.Duration
	clock                       Clock
}

func sessionInvalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// resolveSession fills defaults into a copy of o and validates the result.
func resolveSession(o *SessionOptions) (sessionSettings, error) {
	var in SessionOptions
	if o != nil {
		in = *o
	}
	s := sessionSettings{
		ttl: in.TTL, renewInterval: in.RenewInterval, safetyMargin: in.SafetyMargin,
		backoffMin: in.BackoffMin, backoffMax: in.BackoffMax, poll: in.PollInterval,
		callTimeout: in.CallTimeout, releaseTimeout: in.ReleaseTimeout,
		clock: clockOr(in.Clock),
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.ttl < 0 {
		return s, sessionInvalid("TTL", "%v is negative", s.ttl)
	}
	if s.backoffMax == 0 {
		s.backoffMax = defaultBackoffMax
	}
	if s.backoffMin == 0 {
		s.backoffMin = min(defaultBackoffMin, s.backoffMax)
	}
	if s.backoffMin <= 0 || s.backoffMax <= 0 {
		return s, sessionInvalid("BackoffMin", "backoff steps must be positive (min %v, max %v)", s.backoffMin, s.backoffMax)
	}
	if s.backoffMin > s.backoffMax {
		return s, sessionInvalid("BackoffMin", "%v exceeds BackoffMax %v", s.backoffMin, s.backoffMax)
	}
	if s.renewInterval == 0 {
		s.renewInterval = s.ttl / 3
	}
	if s.renewInterval <= 0 {
		return s, sessionInvalid("RenewInterval", "%v is not positive", s.renewInterval)
	}
	if s.renewInterval > s.ttl/2 {
		return s, sessionInvalid("RenewInterval", "%v exceeds TTL/2 (%v)", s.renewInterval, s.ttl/2)
	}
	if s.safetyMargin == 0 {
		s.safetyMargin = s.ttl / 10
	}
	if s.safetyMargin < 0 || s.safetyMargin >= s.ttl {
		return s, sessionInvalid("SafetyMargin", "%v is outside [0, TTL %v)", s.safetyMargin, s.ttl)
	}
	if s.renewInterval >= s.ttl-s.safetyMargin {
		return s, sessionInvalid("SafetyMargin", "the safety deadline (TTL %v - margin %v) comes before the first renewal at %v", s.ttl, s.safetyMargin, s.renewInterval)
	}
	if s.poll == 0 {
		s.poll = min(s.ttl/3, defaultMaxPoll)
	}
	if s.poll <= 0 {
		return s, sessionInvalid("PollInterval", "%v is not positive", s.poll)
	}
	if s.callTimeout == 0 {
		s.callTimeout = min(s.ttl/3, DefaultMaxCallTimeout)
	}
	if s.callTimeout <= 0 {
		return s, sessionInvalid("CallTimeout", "%v is not positive", s.callTimeout)
	}
	if s.releaseTimeout == 0 {
		s.releaseTimeout = defaultReleaseTimeout
	}
	if s.releaseTimeout <= 0 {
		return s, sessionInvalid("ReleaseTimeout", "%v is not positive", s.releaseTimeout)
	}
	return s, nil
}

// Session takes locks from one Locker and keeps them: one keepalive
// renews every lease the session holds, together, and a store that can
// renew many leases in one call (PostgreSQL: one statement) is asked once
// per renewal round. Lock returns a *Handle per lock; the
// keepalive updates it in place, so a handle never goes stale.
//
// A session starts no goroutine until it holds a lease and stops its
// keepalive when it holds none, so an idle session costs nothing and
// needs no Close; Close releases whatever it still holds and refuses new
// locks. A Session is safe for concurrent use; many goroutines may lock
// different keys (or wait for the same key) through one session.
//
// Every lease of a session has its own owner id (from NewOwnerID), so
// two handles of one session on the same key exclude each other: fence
// locks are not reentrant (see the package doc).
type Session struct {
	locker *Locker
	s      sessionSettings
	// sys: the session and its Locker both run on SystemClock, so one
	// reading of time.Now serves the session, the Locker and the
	// deadline of a call's context.
	sys bool

	wake chan struct{} // tells the keepalive of a handle due early
	done chan struct{} // closed by Close

	mu      sync.Mutex
	running bool // the keepalive goroutine runs
	// When the keepalive does not run, starter (on the system clock)
	// starts it at startAt, the first time a handle falls due; startAt
	// is zero when it is not armed.
	starter *time.Timer
	startAt time.Time
	hs      map[*Handle]*hstate
	slots   slotReleases // semaphore slots this session released lately
	// what the keepalive's timers wait for
	armedRenew, armedDeadline time.Time
}

// NewSession returns a Session over locker. opts may be nil. It returns
// an error matching ErrInvalid when locker is nil or the options are
// impossible (see SessionOptions). The session reports its events to the
// locker's Observer (Locker.SetObserver).
//
// An application needs one Session per Locker and TTL: guard.Run,
// election, schedule, Bind and the SQL helpers all take it, and one
// keepalive serves every lease they hold.
func NewSession(locker *Locker, opts *SessionOptions) (*Session, error) {
	if locker == nil {
		return nil, sessionInvalid("locker", "nil")
	}
	s, err := resolveSession(opts)
	if err != nil {
		return nil, err
	}
	if m := locker.spec.MinRenewInterval; s.renewInterval < m {
		return nil, sessionInvalid("RenewInterval", "%v is shorter than the %v a %s store needs between two writes of one key", s.renewInterval, m, locker.spec.Name)
	}
	_, sessSys := s.clock.(SystemClock)
	_, lockerSys := locker.clock.(SystemClock)
	return &Session{locker: locker, s: s, sys: sessSys && lockerSys, wake: make(chan struct{}, 1), done: make(chan struct{})}, nil
}

// Locker returns the Locker the session takes its locks from.
func (s *Session) Locker() *Locker { return s.locker }

// obs returns the Observer of the session's Locker, or nil.
func (s *Session) obs() *Observer { return s.locker.obs.Load() }

// Clock returns the clock the session times its leases and waits on
// (SessionOptions.Clock, or SystemClock): election and schedule time their
// own waits on it too.
func (s *Session) Clock() Clock { return s.s.clock }

// TTL returns the lease duration of the session's handles.
func (s *Session) TTL() time.Duration { return s.s.ttl }

// Done is closed when Close is called.
func (s *Session) Done() <-chan struct{} { return s.done }

// Close releases every lease the session holds (each with its own
// ReleaseTimeout) and makes later Lock calls fail with
// ErrSessionClosed. It returns the errors of releases that failed for
// another reason than the lease being no longer held, joined. Calling it
// again does nothing.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return nil
	default:
	}
	close(s.done)
	s.mu.Unlock()
	handles := s.handles()
	var errs []error
	for _, h := range handles {
		if err := h.Release(ctx); err != nil && !errors.Is(err, ErrNotHeld) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Len returns the number of handles the session holds (not yet released
// nor lost).
func (s *Session) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.hs {
		if !st.gone {
			n++
		}
	}
	return n
}
