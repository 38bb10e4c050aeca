package s3

import (
	"context"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/clockfree"
)

// state is what a store knows of one key's object: whether it exists, its
// ETag and record, and since when that ETag has been seen.
type state struct {
	found  bool
	etag   string
	rec    record
	since  time.Time
	cached bool // from Observations, not read just now: it may be stale
}

// sighting returns the version with ETag etag holding r as clockfree
// sees it: the ETag names the version but does not order it (S3 numbers
// nothing), so a slow read of an older version is remembered as a new
// sighting, which only delays a takeover; the record rides along so that
// a remembered ETag still serves as the condition of the next write.
func sighting(etag string, r record) clockfree.Sighting {
	return clockfree.Sighting{Version: etag, Held: r.held, TTL: r.ttl, Expires: r.expires, Record: r}
}

// look reads key's object and records what it saw.
func (d *store) look(ctx context.Context, key, name string) (state, error) {
	data, etag, found, err := d.store.read(ctx, name)
	if err != nil {
		return state{}, err
	}
	// The version existed when the answer arrived; a time taken
	// before sending the read could precede the write that made it.
	seen := d.clock.Now()
	if !found {
		return state{}, nil
	}
	r, err := parseRecord(key, data)
	if err != nil {
		return state{}, err
	}
	since := d.obs.Note(d.scope, name, sighting(etag, r), seen)
	return state{found: true, etag: etag, rec: r, since: since}, nil
}

// remembered returns the last state d's Observations hold for name, or
// reads it when they hold none.
func (d *store) remembered(ctx context.Context, key, name string) (state, error) {
	if s, since, ok := d.obs.Last(d.scope, name); ok {
		if r, ok := s.Record.(record); ok {
			return state{found: true, etag: s.Version, rec: r, since: since, cached: true}, nil
		}
	}
	return d.look(ctx, key, name)
}

// wrote records a record that d wrote as the version etag, sent at sent.
func (d *store) wrote(name string, etag string, r record, sent time.Time) {
	d.obs.Note(d.scope, name, sighting(etag, r), sent)
}

// holding decides whether st holds a lease that is still running at now
// on d's clock, and until when (zero where unknown): clockfree's judgement.
func (d *store) holding(st state, now time.Time) (held bool, until time.Time) {
	if !st.found {
		return false, time.Time{}
	}
	return d.mode.Holding(clockfree.Sighting{Held: st.rec.held, TTL: st.rec.ttl, Expires: st.rec.expires}, st.since, now)
}

// newRecord returns the record of a lease held by owner with token for
// ttl, sent at sent.
func (d *store) newRecord(owner string, token fence.Token, ttl time.Duration, sent time.Time) record {
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
