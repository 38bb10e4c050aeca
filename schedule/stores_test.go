package schedule_test

import (
	"time"
)

// patience is how long the real-time tests wait for an event that takes
// a few windows of a few leases.
func patience(lease time.Duration) time.Duration {
	return 30*time.Second + 8*lease
}

// offsetNow returns the Offset that starts a window of interval now, so
// that a real-time test begins at the start of a window instead of
// anywhere in it.
func offsetNow(interval time.Duration) time.Duration {
	return time.Duration(time.Now().UnixNano() % int64(interval))
}
