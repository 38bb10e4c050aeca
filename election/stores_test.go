package election_test

import (
	"time"

	"github.com/fencekit/fence/election"
	"github.com/fencekit/fence/guard"
)

// realTimeOptions are the options of the real-time tests for a lease of
// ttl: followers retry every TTL/10 (jittered), leaders renew every TTL/3
// (Cloud Storage's MinRenewInterval at its MinTTL) and step down by
// their safety deadline 0.6 TTL after their last renewal was sent.
func realTimeOptions(ttl time.Duration) election.Options {
	return election.Options{
		TTL:           ttl,
		RetryInterval: ttl / 10,
		Guard: guard.Options{
			RenewInterval:  ttl / 3,
			SafetyMargin:   ttl * 2 / 5,
			CallTimeout:    ttl / 5,
			ReleaseTimeout: ttl / 2,
		},
	}
}

// patience is how long the real-time tests wait for an event that takes
// up to a few TTLs.
func patience(ttl time.Duration) time.Duration {
	return 30*time.Second + 4*ttl
}
