package dynamo

import (
	"sync"
	"time"
)

// Observations is the memory of a clock-free Locker: for each key it saw
// held by another owner, the record version it saw and when it first saw
// that version. A Locker takes a key over once it has seen one version
// unchanged for the lease duration stored with it.
//
// Share one Observations between the Lockers of a process (Options), so
// that an Inspect or Acquire by one of them starts the wait for all; the
// Lockers sharing it must use one Clock. It holds one entry per key seen
// held, dropped when the key is seen free or acquired. It is safe for
// concurrent use. The zero value is not usable; call NewObservations.
type Observations struct {
	mu   sync.Mutex
	seen map[obsKey]observation
}

type obsKey struct{ table, key string }

type observation struct {
	version string
	lease   time.Duration
	since   time.Time // when the version was first seen, on the Clock
}

// NewObservations returns an empty Observations.
func NewObservations() *Observations {
	return &Observations{seen: make(map[obsKey]observation)}
}

// Len returns the number of keys remembered.
func (o *Observations) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.seen)
}

// note records that key of table was seen at now with version and lease
// held, and returns since when that version has been seen.
func (o *Observations) note(table, key, version string, lease time.Duration, now time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := obsKey{table, key}
	if prev, ok := o.seen[k]; ok && prev.version == version {
		return prev.since
	}
	o.seen[k] = observation{version: version, lease: lease, since: now}
	return now
}

// expired returns the version of key that has been seen unchanged for its
// whole lease at now, if there is one.
func (o *Observations) expired(table, key string, now time.Time) (version string, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	obs, found := o.seen[obsKey{table, key}]
	if !found || now.Sub(obs.since) < obs.lease {
		return "", false
	}
	return obs.version, true
}

// forget drops what was seen of key.
func (o *Observations) forget(table, key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.seen, obsKey{table, key})
}
