package main

import (
	"errors"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
)

// observer reports the guard's events on stderr: always a release that
// failed, and with verbose everything else. Owner ids are never printed.
func (c *cli) observer(verbose bool) *guard.Observer {
	o := &guard.Observer{
		Released: func(e guard.ReleasedEvent) {
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
	o.AcquireAttempt = func(e guard.AcquireAttemptEvent) {
		switch e.Outcome {
		case guard.Busy:
			c.errorf("%q is busy (attempt %d)", e.Key, e.Attempt)
		case guard.Failed:
			c.errorf("attempt %d on %q failed: %v", e.Attempt, e.Key, e.Err)
		}
	}
	o.Acquired = func(e guard.AcquiredEvent) {
		c.errorf("acquired %q: token %d, ttl %v, after %d attempt(s) in %v",
			e.Lease.Key, e.Lease.Token, e.Lease.TTL, e.Attempts, e.Latency.Round(time.Millisecond))
	}
	o.Renewed = func(e guard.RenewedEvent) {
		if e.Err != nil {
			c.errorf("renewal of %q (token %d) failed: %v", e.Lease.Key, e.Lease.Token, e.Err)
		}
	}
	return o
}
