package main

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fencekit/fence"
)

// observer reports the guard's events on stderr: always a release that
// failed, and with verbose everything else. Owner ids are never printed.
func (c *cli) observer(verbose bool) *fence.Observer {
	o := &fence.Observer{
		Released: func(e fence.ReleasedEvent) {
			switch {
			case e.Err == nil && verbose:
				c.errorf("released %q (token %d) after %v", e.Lease.Key, e.Lease.Token, e.Held.Round(time.Millisecond))
			case e.Err != nil && !errors.Is(e.Err, fence.ErrNotHeld):
				c.errorf("warning: could not release %q (token %d): %v; it expires after its TTL (%v)", e.Lease.Key, e.Lease.Token, e.Err, e.Lease.TTL)
			}
		},
	}
	if !verbose {
		return o
	}
	o.AcquireAttempt = func(e fence.AcquireAttemptEvent) {
		switch e.Outcome {
		case fence.Busy:
			c.errorf("%q is busy (attempt %d)", e.Key, e.Attempt)
		case fence.Failed:
			c.errorf("attempt %d on %q failed: %v", e.Attempt, e.Key, e.Err)
		}
	}
	o.Acquired = func(e fence.AcquiredEvent) {
		c.errorf("acquired %q: token %d, ttl %v, after %d attempt(s) in %v",
			e.Lease.Key, e.Lease.Token, e.Lease.TTL, e.Attempts, e.Latency.Round(time.Millisecond))
	}
	var r renewals
	o.Renewed = func(e fence.RenewedEvent) { r.report(c, e) }
	return o
}

// renewals reports failed renewals without repeating itself: a failure
// is printed when its error differs from the previous one's, and the
// same error again is only counted, the count printed with the next
// report or once a renewal succeeds again.
type renewals struct {
	mu      sync.Mutex
	last    string // the error of the last failure printed, "" after a success
	repeats int    // failures with that error since it was printed
}

func (r *renewals) report(c *cli, e fence.RenewedEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	what := fmt.Sprintf("renewal of %q (token %d)", e.Lease.Key, e.Lease.Token)
	switch {
	case e.Err == nil && r.last != "":
		c.errorf("%s succeeded%s", what, r.again())
		r.last, r.repeats = "", 0
	case e.Err == nil:
	case e.Err.Error() == r.last:
		r.repeats++
	default:
		c.errorf("%s failed: %v%s", what, e.Err, r.again())
		r.last, r.repeats = e.Err.Error(), 0
	}
}

// again says how often the last printed failure was repeated unprinted.
func (r *renewals) again() string {
	if r.repeats == 0 {
		return ""
	}
	return fmt.Sprintf(" (the previous failure was repeated %d more time(s))", r.repeats)
}
