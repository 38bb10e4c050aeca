package fence

import "time"

// Clock is the source of time for lockers that measure expiry locally and
// for the guard. Tests inject a fake (see package clocktest) so that nothing
// sleeps for a TTL. Durations between two Now readings of the system clock
// use Go's monotonic clock.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer a Clock hands out.
type Timer interface {
	// C delivers the time when the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now(), which carries a monotonic reading.
func (SystemClock) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (SystemClock) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

type sysTimer struct{ t *time.Timer }

func (s sysTimer) C() <-chan time.Time { return s.t.C }
func (s sysTimer) Stop() bool          { return s.t.Stop() }

// clockOr returns c, or SystemClock when c is nil.
func clockOr(c Clock) Clock {
	if c == nil {
		return SystemClock{}
	}
	return c
}
