package election_test

import (
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/election"
)

// realTimeOptions are the options of the real-time tests for a lease of
// ttl: leaders renew every TTL/3 (Cloud Storage's MinRenewInterval at
// its MinTTL) and step down by their safety deadline 0.6 TTL after their
// last renewal was sent; followers retry every TTL/10 (jittered).
func realTimeOptions(ttl time.Duration) (fence.SessionOptions, election.Options) {
	return fence.SessionOptions{
			TTL:            ttl,
			RenewInterval:  ttl / 3,
			SafetyMargin:   ttl * 2 / 5,
			CallTimeout:    ttl / 5,
			ReleaseTimeout: ttl / 2,
		}, election.Options{
			RetryInterval: ttl / 10,
		}
}

// patience is how long the real-time tests wait for an event that takes
// up to a few TTLs.
func patience(ttl time.Duration) time.Duration {
	return 30*time.Second + 4*ttl
}
