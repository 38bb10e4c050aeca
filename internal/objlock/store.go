package objlock

import (
	"fmt"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
)

// Config describes a Store: the backend's bucket and rules, and the
// options of its Locker, which New checks.
type Config struct {
	// Bucket does the requests.
	Bucket Bucket
	// Scope names the bucket in Observations (its name).
	Scope string
	// ObjectName returns the name of key's object, or a
	// *fence.InvalidError for a key the store cannot name.
	ObjectName func(key string) (string, error)
	// OrderedVersions: versions are decimal numbers that grow with each
	// write (see the package doc).
	OrderedVersions bool
	// RetryFreeRaces is how many times one Acquire that lost a race
	// after which the key is free tries again (0: never; a lost race is
	// then a *fence.HeldError).
	RetryFreeRaces int
	// Obs remembers what the Store sees (nil: observations of its own).
	Obs *clockfree.Observations

	// The options of the backend, with the defaults it documents.
	Clock              fence.Clock // nil: fence.SystemClock
	TrustedClock       bool
	MaxClockSkew       time.Duration
	MaxAttempts        int // 0: DefaultMaxAttempts
	DefaultMaxAttempts int
	Backoff            time.Duration // 0: DefaultBackoff
	DefaultBackoff     time.Duration
	MaxBackoff         time.Duration // the cap of Backoff and of its doublings
	ProbeInterval      time.Duration // as probe.Interval takes it
}

// Store is the driver.Locker (less Info) and driver.ReleaseNotifier of
// one bucket: the reads and conditional writes of its objects, and what
// it saw of them. A backend embeds it.
type Store struct {
	bucket   Bucket
	scope    string
	name     func(key string) (string, error)
	ordered  bool
	freeRace int
	attempts int
	backoff  backoff.Policy
	clock    fence.Clock
	obs      *clockfree.Observations
	mode     clockfree.Mode
	probe    *probe.Prober // nil with probes off
}

// New checks c's options and returns the Store they make.
func New(c Config) (*Store, error) {
	mode := clockfree.Mode{TrustedClock: c.TrustedClock, MaxClockSkew: c.MaxClockSkew}
	if err := mode.Check(); err != nil {
		return nil, err
	}
	switch {
	case c.MaxAttempts < 0:
		return nil, &fence.InvalidError{Field: "MaxAttempts", Reason: fmt.Sprintf("%d is negative", c.MaxAttempts)}
	case c.Backoff < 0 || c.Backoff > c.MaxBackoff:
		return nil, &fence.InvalidError{Field: "Backoff", Reason: fmt.Sprintf("%v is outside the range 0 to %v", c.Backoff, c.MaxBackoff)}
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = c.DefaultMaxAttempts
	}
	if c.Backoff == 0 {
		c.Backoff = c.DefaultBackoff
	}
	every, err := probe.Interval("ProbeInterval", c.ProbeInterval)
	if err != nil {
		return nil, err
	}
	if c.Obs == nil {
		c.Obs = clockfree.NewObservations()
	}
	d := &Store{
		bucket:   c.Bucket,
		scope:    c.Scope,
		name:     c.ObjectName,
		ordered:  c.OrderedVersions,
		freeRace: c.RetryFreeRaces,
		attempts: c.MaxAttempts,
		backoff:  backoff.Policy{First: c.Backoff, Max: c.MaxBackoff},
		clock:    driver.ClockOrSystem(c.Clock),
		obs:      c.Obs,
		mode:     mode,
	}
	if every > 0 {
		d.probe = probe.New(every, d.clock, d.probeRead)
	}
	return d, nil
}

// Clock returns the Store's clock, for driver.LockerOptions.
func (d *Store) Clock() fence.Clock { return d.clock }

// Mode returns the Store's expiry mode.
func (d *Store) Mode() clockfree.Mode { return d.mode }

// Backoff returns the Store's retry waits.
func (d *Store) Backoff() backoff.Policy { return d.backoff }

// Prober returns the Store's prober, nil with probes off.
func (d *Store) Prober() *probe.Prober { return d.probe }
