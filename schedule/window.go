package schedule

import "time"

// windowStart returns the start of the window holding t: the latest
// offset + k × interval (k an integer, counted from the Unix epoch) not
// after t, in UTC.
func windowStart(t time.Time, interval, offset time.Duration) time.Time {
	ns := t.UnixNano() - int64(offset)
	k := ns / int64(interval)
	if ns%int64(interval) < 0 {
		k-- // floor for times before the epoch
	}
	return time.Unix(0, k*int64(interval)+int64(offset)).UTC()
}

// markKey returns the key that marks window as started for job name.
// Whole seconds print as in RFC 3339; shorter windows get the fraction.
func markKey(name string, window time.Time) string {
	return name + ":" + window.UTC().Format(time.RFC3339Nano)
}

// doneKey returns the key that marks window as done for job name: its
// run finished, or it was reported missed.
func doneKey(name string, window time.Time) string {
	return markKey(name, window) + ":done"
}
