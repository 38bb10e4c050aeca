// Package clockfree decides when a lease has run out on a store that has
// no clock of its own to say so, such as DynamoDB or Cloud Storage: every
// locker judges on its own clock, and never compares its clock with
// another machine's unless told to.
//
// In clock-free mode (the default), a contender takes a key over only after
// it has watched one version of the key's record stay unchanged for the
// whole lease duration stored in it, timed on its own monotonic clock. A
// holder that renews writes a new version, which restarts every watcher's
// wait. Clocks of different machines are never compared; only their rates
// matter.
//
// In trusted-clock mode, the record also stores its expiry on the writer's
// wall clock, and a contender takes over once its own wall clock is past
// that expiry plus MaxClockSkew, with no wait for a first sighting; it is
// faster after a crash but as safe as the machines' clocks are close.
//
// A backend keeps one Observations per Locker, notes every version it
// reads or writes, and asks Mode.Holding. It serves lockers/dynamo and
// internal/objlock (lockers/gcs and lockers/s3).
package clockfree

import (
	"fmt"
	"sync"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/urlparam"
)

// MaxClockSkew bounds Mode.MaxClockSkew.
const MaxClockSkew = time.Hour

// Mode chooses how leases run out. The zero Mode is clock-free.
type Mode struct {
	// TrustedClock selects trusted-clock expiry. Default: false,
	// clock-free expiry.
	TrustedClock bool
	// MaxClockSkew is how far apart the wall clocks of the machines using
	// the store may be, in trusted-clock mode only: an expired lease is
	// taken over this long after its stored expiry. 0 to MaxClockSkew.
	MaxClockSkew time.Duration
}

// Check returns a *fence.InvalidError for a skew out of range, or one set
// without TrustedClock.
func (m Mode) Check() error {
	switch {
	case m.MaxClockSkew < 0 || m.MaxClockSkew > MaxClockSkew:
		return &fence.InvalidError{Field: "MaxClockSkew", Reason: fmt.Sprintf("%v is outside the range 0 to %v", m.MaxClockSkew, MaxClockSkew)}
	case m.MaxClockSkew != 0 && !m.TrustedClock:
		return &fence.InvalidError{Field: "MaxClockSkew", Reason: "set without TrustedClock; clock-free expiry ignores wall clocks"}
	}
	return nil
}

// FromURL reads the trusted-clock and max-clock-skew parameters of a
// store URL.
func FromURL(p *urlparam.Params) Mode {
	m := Mode{TrustedClock: p.Bool("trusted-clock"), MaxClockSkew: p.Duration("max-clock-skew")}
	if m.MaxClockSkew != 0 && !m.TrustedClock {
		p.Fail("max-clock-skew needs trusted-clock=true")
	}
	return m
}

// URLForm is the part of a URL form that FromURL reads.
const URLForm = "trusted-clock=true&max-clock-skew=D"

// Sighting is one version of a key's record, as a backend read or wrote it.
type Sighting struct {
	// Version identifies the version: it changes on every write of the
	// record (a random version attribute, an object generation).
	Version string
	// Seq orders versions where the store numbers them (an object
	// generation); 0 where it does not. A sighting of a lower Seq than
	// the one remembered is a slow read and is not remembered.
	Seq int64
	// Held says the record holds a lease; TTL is the lease duration
	// stored with it.
	Held bool
	TTL  time.Duration
	// Expires is the expiry stored by a trusted-clock writer, on its wall
	// clock; zero when none was stored.
	Expires time.Time
	// Record is the backend's parsed record, returned by Last.
	Record any
}

// Observations remembers, for each key of a store, the last version seen
// and since when it has been seen. Stores that share one (the tests' do)
// must share a Clock too. It holds one small entry per key seen, until
// Forget. It is safe for concurrent use. The zero value is not usable;
// call NewObservations.
type Observations struct {
	mu   sync.Mutex
	seen map[obsKey]observation
}

// obsKey names a key across stores: scope is the table or bucket.
type obsKey struct{ scope, key string }

type observation struct {
	s     Sighting
	since time.Time // when the version was first seen, on the Clock
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

// Note records that key of scope had version s at the time at: the time
// the answer of a read arrived, or the send time of the write that made
// the version. It returns since when that version has been seen: seeing
// it again keeps the earliest time, since either time is no earlier than
// the write of the version was sent.
func (o *Observations) Note(scope, key string, s Sighting, at time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := obsKey{scope, key}
	prev, ok := o.seen[k]
	switch {
	case ok && prev.s.Version == s.Version:
		if at.Before(prev.since) {
			prev.since = at
			o.seen[k] = prev
		}
		return prev.since
	case ok && s.Seq != 0 && prev.s.Seq > s.Seq:
		return at // a read that raced a newer write
	}
	o.seen[k] = observation{s: s, since: at}
	return at
}

// Last returns the last version remembered for key and since when it has
// been seen.
func (o *Observations) Last(scope, key string) (s Sighting, since time.Time, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	obs, ok := o.seen[obsKey{scope, key}]
	return obs.s, obs.since, ok
}

// Forget drops what was seen of key.
func (o *Observations) Forget(scope, key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.seen, obsKey{scope, key})
}

// Expired returns the version of key that, in clock-free mode, has been
// seen unchanged for its whole lease at now, if there is one: the
// version a takeover may replace.
func (o *Observations) Expired(scope, key string, now time.Time) (Sighting, bool) {
	s, since, ok := o.Last(scope, key)
	if !ok || !s.Held || now.Sub(since) < s.TTL {
		return Sighting{}, false
	}
	return s, true
}

// Holding decides whether version s, seen since since, holds a lease that
// still runs at now on the caller's clock, and until when (zero where
// unknown, which only happens in trusted-clock mode within the skew
// allowance). In trusted-clock mode a version with a stored expiry is
// judged by it; a version without one (written by a clock-free writer) is
// judged clock-free.
func (m Mode) Holding(s Sighting, since, now time.Time) (held bool, until time.Time) {
	if !s.Held {
		return false, time.Time{}
	}
	if m.TrustedClock && !s.Expires.IsZero() {
		if !now.Before(s.Expires.Add(m.MaxClockSkew)) {
			return false, time.Time{}
		}
		// The stored expiry is on the writer's clock; no lease outlasts a
		// full duration from the moment it was read either.
		until = s.Expires
		if limit := now.Add(s.TTL); until.After(limit) {
			until = limit
		}
		if !until.After(now) {
			until = time.Time{}
		}
		return true, until
	}
	until = since.Add(s.TTL)
	if !now.Before(until) {
		return false, time.Time{}
	}
	return true, until
}

// Ends returns when the lease of version s, seen since since, ends for
// the caller, as Holding judges it: in trusted-clock mode, for a version
// with a stored expiry, that expiry plus MaxClockSkew; otherwise a full
// lease after since. Zero when s holds no lease. A waiter's attempt at
// that time may take the key over.
func (m Mode) Ends(s Sighting, since time.Time) time.Time {
	switch {
	case !s.Held:
		return time.Time{}
	case m.TrustedClock && !s.Expires.IsZero():
		return s.Expires.Add(m.MaxClockSkew)
	}
	return since.Add(s.TTL)
}
