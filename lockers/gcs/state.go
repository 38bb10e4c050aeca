package gcs

import (
	"context"
	"time"

	"github.com/fencekit/fence"
)

// state is what a Locker knows of one key's object: whether it exists, its
// generation and record, and since when that generation has been seen.
type state struct {
	found  bool
	gen    int64
	rec    record
	since  time.Time
	cached bool // from Observations, not read just now: it may be stale
}

// id names key's object for Observations.
func (l *Locker) id(name string) objectID {
	return objectID{bucket: l.store.bucket.BucketName(), name: name}
}

// look reads key's object and records what it saw.
func (l *Locker) look(ctx context.Context, key, name string) (state, error) {
	data, gen, found, err := l.store.read(ctx, name)
	if err != nil {
		return state{}, err
	}
	// The generation existed when the answer arrived; a time taken
	// before sending the read could precede the write that made it.
	seen := l.clock.Now()
	if !found {
		return state{}, nil
	}
	r, err := parseRecord(key, data)
	if err != nil {
		return state{}, err
	}
	since := l.obs.note(l.id(name), gen, r, seen)
	return state{found: true, gen: gen, rec: r, since: since}, nil
}

// remembered returns the last state l's Observations hold for name, or
// reads it when they hold none.
func (l *Locker) remembered(ctx context.Context, key, name string) (state, error) {
	if obs, ok := l.obs.last(l.id(name)); ok {
		return state{found: true, gen: obs.gen, rec: obs.rec, since: obs.since, cached: true}, nil
	}
	return l.look(ctx, key, name)
}

// wrote records a record that l wrote as generation gen, sent at sent.
func (l *Locker) wrote(name string, gen int64, r record, sent time.Time) {
	l.obs.note(l.id(name), gen, r, sent)
}

// holding decides whether st holds a lease that is still running at now
// on l's clock, and until when (zero where unknown).
func (l *Locker) holding(st state, now time.Time) (held bool, until time.Time) {
	if !st.found || !st.rec.held {
		return false, time.Time{}
	}
	if l.trusted && !st.rec.expires.IsZero() {
		if !now.Before(st.rec.expires.Add(l.skew)) {
			return false, time.Time{}
		}
		// The stored expiry is on the writer's clock; no lease outlasts a
		// full duration from the moment it was read either.
		until = st.rec.expires
		if limit := now.Add(st.rec.ttl); until.After(limit) {
			until = limit
		}
		if !until.After(now) {
			until = time.Time{} // within the skew allowance
		}
		return true, until
	}
	until = st.since.Add(st.rec.ttl)
	if !now.Before(until) {
		return false, time.Time{}
	}
	return true, until
}

// newRecord returns the record of a lease held by owner with token for
// ttl, sent at sent.
func (l *Locker) newRecord(owner string, token fence.Token, ttl time.Duration, sent time.Time) record {
	r := record{held: true, owner: owner, token: token, ttl: ttl, write: newWriteID()}
	if l.trusted {
		r.expires = sent.Add(ttl)
	}
	return r
}

// freed returns r marked free, keeping its owner and token.
func freed(r record) record {
	return record{owner: r.owner, token: r.token, ttl: r.ttl, write: newWriteID()}
}
