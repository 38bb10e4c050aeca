package objlock

import (
	"context"
	"strconv"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/clockfree"
)

// state is what a Store knows of one key's object: whether it exists,
// its version and record, and since when that version has been seen.
type state struct {
	found   bool
	version string
	rec     record
	since   time.Time
	cached  bool // from Observations, not read just now: it may be stale
}

// sighting returns version holding r as clockfree sees it. An ordered
// version (a generation) is also its sequence number; an unordered one
// (an ETag) only names it, so a slow read of an older version is
// remembered as a new sighting, which only delays a takeover. The record
// rides along so that a remembered version still serves as the condition
// of the next write.
func (d *Store) sighting(version string, r record) clockfree.Sighting {
	s := clockfree.Sighting{Version: version, Held: r.held, TTL: r.ttl, Expires: r.expires, Record: r}
	if d.ordered {
		s.Seq, _ = strconv.ParseInt(version, 10, 64)
	}
	return s
}

// look reads key's object and records what it saw.
func (d *Store) look(ctx context.Context, key, name string) (state, error) {
	data, version, found, err := d.read(ctx, name)
	if err != nil {
		return state{}, err
	}
	// The version existed when the answer arrived; a time taken before
	// sending the read could precede the write that made it.
	seen := d.clock.Now()
	if !found {
		return state{}, nil
	}
	r, err := parseRecord(key, data)
	if err != nil {
		return state{}, err
	}
	since := d.obs.Note(d.scope, name, d.sighting(version, r), seen)
	return state{found: true, version: version, rec: r, since: since}, nil
}

// remembered returns the last state d's Observations hold for name, or
// reads it when they hold none.
func (d *Store) remembered(ctx context.Context, key, name string) (state, error) {
	if s, since, ok := d.obs.Last(d.scope, name); ok {
		if r, ok := s.Record.(record); ok {
			return state{found: true, version: s.Version, rec: r, since: since, cached: true}, nil
		}
	}
	return d.look(ctx, key, name)
}

// wrote records a record that d wrote as version, sent at sent.
func (d *Store) wrote(name, version string, r record, sent time.Time) {
	d.obs.Note(d.scope, name, d.sighting(version, r), sent)
}

// holding decides whether st holds a lease that is still running at now
// on d's clock, and until when (zero where unknown): clockfree's judgement.
func (d *Store) holding(st state, now time.Time) (held bool, until time.Time) {
	if !st.found {
		return false, time.Time{}
	}
	return d.mode.Holding(clockfree.Sighting{Held: st.rec.held, TTL: st.rec.ttl, Expires: st.rec.expires}, st.since, now)
}

// newRecord returns the record of a lease held by owner with token for
// ttl, sent at sent.
func (d *Store) newRecord(owner string, token fence.Token, ttl time.Duration, sent time.Time) record {
	r := record{held: true, owner: owner, token: token, ttl: ttl, write: newWriteID()}
	if d.mode.TrustedClock {
		r.expires = sent.Add(ttl)
	}
	return r
}

// freed returns r marked free, keeping its owner and token.
func freed(r record) record {
	return record{owner: r.owner, token: r.token, ttl: r.ttl, write: newWriteID()}
}
