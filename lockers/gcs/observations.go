package gcs

import (
	"sync"
	"time"
)

// Observations is the memory of Lockers: for each object, the last
// generation seen (read or written), the record it held, and since when
// that generation has been seen. A clock-free Locker takes a key over once
// one generation has been seen unchanged for the lease duration in its
// record; every Locker also uses the remembered generation as the
// precondition of its next write, which saves a read when it is still
// current (and costs one when it is not).
//
// Share one Observations between the Lockers of a process (Options), so
// that a look by one of them starts the wait for all; the Lockers sharing
// it must use one Clock. It keeps one small entry per object seen, for as
// long as it lives. It is safe for concurrent use. The zero value is not
// usable; call NewObservations.
type Observations struct {
	mu   sync.Mutex
	seen map[objectID]observation
}

// objectID names an object across buckets.
type objectID struct{ bucket, name string }

// observation is what was last seen of one object.
type observation struct {
	gen   int64
	rec   record
	since time.Time // when gen was first seen (or sent, when written), on the Clock
}

// NewObservations returns an empty Observations.
func NewObservations() *Observations {
	return &Observations{seen: make(map[objectID]observation)}
}

// Len returns the number of objects remembered.
func (o *Observations) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.seen)
}

// note records that id had generation gen with record r at the time at
// (the time of a read, or the send time of the write that made it), and
// returns since when gen has been seen. Seeing gen again keeps the
// earliest time: either time is no earlier than the write of gen was sent.
// A generation older than the one remembered is ignored (a slow reader).
func (o *Observations) note(id objectID, gen int64, r record, at time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	prev, ok := o.seen[id]
	switch {
	case ok && prev.gen == gen:
		if at.Before(prev.since) {
			prev.since = at
			o.seen[id] = prev
		}
		return prev.since
	case ok && prev.gen > gen:
		// Generations of one name only grow; a read that raced a newer
		// write does not move the memory back.
		return at
	}
	o.seen[id] = observation{gen: gen, rec: r, since: at}
	return at
}

// last returns what was last seen of id.
func (o *Observations) last(id objectID) (observation, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	obs, ok := o.seen[id]
	return obs, ok
}
