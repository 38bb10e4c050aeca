package etcd

import (
	"sync"
	"time"

	"github.com/fencekit/fence"
)

// slack is how much longer than its records' TTL (in whole seconds) a
// shared etcd lease lasts, in seconds: an Acquire made less than slack
// after the shared lease's last keepalive gives its record a full TTL
// without keeping the lease alive itself.
const slack = 1

// shared is the state of a Locker's shared etcd leases: one per TTL in
// whole seconds (a group), holding every lock record the Locker created
// with that TTL, and what the Locker knows of each record it created
// (by key): its token, owner, etcd lease, and its own end, the send time
// of its latest acquisition or renewal plus its TTL on the monotonic
// clock. A shared lease lasts its group's TTL plus slack; the Locker
// deletes a record whose own end passed while its lease lives on (the
// sweep), so that a record nobody renews ends within its TTL even while
// the others on its lease are renewed.
//
// A record's entry is trusted (see usable) only when no call on its key
// is in flight and no call's outcome was lost: then the record attached
// to the entry's etcd lease under the key, if any, is the entry's, since
// no other Locker attaches records to this Locker's leases.
type shared struct {
	mu     sync.Mutex
	groups map[int64]*group // by TTL in whole seconds
	ids    map[int64]int64  // TTL in whole seconds of each etcd lease granted, by id
	recs   map[string]*rec  // by key
	seq    uint64           // counts the changes of recs
	timer  *time.Timer      // the next sweep
	timeAt time.Time        // when timer fires
	sweep  func()           // the store's sweep, run by timer
}

// group is a shared etcd lease.
type group struct {
	id int64     // 0 when there is none
	at time.Time // send time of its grant or latest keepalive answered
}

// rec is what the Locker knows of a lock record it created.
type rec struct {
	lease  int64 // the etcd lease it is (or may be) attached to
	token  fence.Token
	owner  string
	until  time.Time // its own end: it is swept after
	busy   int       // calls on the key in flight
	unsure bool      // a call's outcome was lost: token unknown
	gone   bool      // deleted: forget it once not busy
	seq    uint64    // shared.seq at its latest change
}

// life is how long the etcd lease of a group of secs seconds surely lasts
// after a keepalive.
func life(secs int64) time.Duration { return time.Duration(secs+slack) * time.Second }

// lease returns the shared etcd lease of secs seconds and the send time of
// its latest grant or keepalive, if it has at least half its life surely
// left; ok is false when there is none.
func (s *shared) lease(secs int64) (id int64, at time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[secs]
	if g == nil || g.id == 0 || time.Since(g.at) > life(secs)/2 {
		return 0, time.Time{}, false
	}
	return g.id, g.at, true
}

// granted makes lease id, granted by a request sent at at, the shared
// lease of secs seconds.
func (s *shared) granted(secs, id int64, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = make(map[int64]*group)
	}
	g := s.groups[secs]
	if g == nil {
		g = &group{}
		s.groups[secs] = g
	}
	if g.id == 0 || g.at.Before(at) {
		g.id, g.at = id, at
	}
	if s.ids == nil {
		s.ids = make(map[int64]int64)
	}
	s.ids[id] = secs
	if len(s.ids) > 2*len(s.groups)+16 {
		s.pruneLocked()
	}
}

// pruneLocked forgets the etcd leases that are no group's and hold none
// of the records the Locker knows: they expire on the server.
func (s *shared) pruneLocked() {
	used := make(map[int64]bool, len(s.groups))
	for _, g := range s.groups {
		used[g.id] = true
	}
	for _, r := range s.recs {
		used[r.lease] = true
	}
	for id := range s.ids {
		if !used[id] {
			delete(s.ids, id)
		}
	}
}

// secs returns the TTL in whole seconds of the records of etcd lease id,
// if the Locker granted it.
func (s *shared) secs(id int64) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	secs, ok := s.ids[id]
	return secs, ok
}

// refreshed records a keepalive of lease id sent at at: the lease lasts
// its life from then.
func (s *shared) refreshed(id int64, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.groups {
		if g.id == id && g.at.Before(at) {
			g.at = at
		}
	}
}

// ended forgets lease id, which the server no longer has, and the records
// attached to it.
func (s *shared) ended(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ids, id)
	for _, g := range s.groups {
		if g.id == id {
			g.id = 0
		}
	}
	for k, r := range s.recs {
		if r.lease == id && !r.unsure {
			s.seq++
			r.seq = s.seq
			r.gone = true
			if r.busy == 0 {
				delete(s.recs, k)
			}
		}
	}
}

// begin notes a call on key in flight and returns its entry, made (unsure)
// for owner and lease id when the key had none.
func (s *shared) begin(key, owner string, id int64) *rec {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recs == nil {
		s.recs = make(map[string]*rec)
	}
	r := s.recs[key]
	if r == nil {
		r = &rec{lease: id, owner: owner, unsure: true, gone: true}
		s.recs[key] = r
	}
	r.busy++
	return r
}

// end ends a call on key begun with begin; change, if not nil, applies
// what the call did to the record's entry.
func (s *shared) end(key string, r *rec, change func(r *rec)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.busy--
	if change != nil {
		s.seq++
		r.seq = s.seq
		change(r)
	}
	if r.busy == 0 && r.gone && s.recs[key] == r {
		delete(s.recs, key)
	}
	if change != nil && !r.gone {
		s.armLocked(r.until)
	}
}

// created is a change: the record of lease, attached to etcd lease id,
// ends at until.
func created(lease fence.Lease, id int64, until time.Time) func(*rec) {
	return func(r *rec) {
		*r = rec{lease: id, token: lease.Token, owner: lease.Owner, until: until, busy: r.busy, seq: r.seq}
	}
}

// lost is a change: the outcome of a call that may have created or
// deleted the record of owner on etcd lease id, ending at until, is
// unknown.
func lost(owner string, id int64, until time.Time) func(*rec) {
	return func(r *rec) {
		if r.gone || r.owner != owner || r.lease != id {
			r.lease, r.owner, r.token = id, owner, 0
		}
		r.unsure, r.gone = true, false
		r.until = later(r.until, until)
	}
}

// deleted is a change: the record is gone.
func deleted(r *rec) { r.gone = true }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// usable returns the trusted entry of lease's record, whose changes are
// all numbered seq or less: nil when the entry is missing, busy, unsure,
// changed since, or names another token or owner.
func (s *shared) usableLocked(lease fence.Lease, seq uint64) *rec {
	r := s.recs[lease.Key]
	if r == nil || r.busy > 0 || r.unsure || r.gone || r.seq > seq || r.token != lease.Token || r.owner != lease.Owner {
		return nil
	}
	return r
}

// renewed records that lease's record, attached to etcd lease id, was
// renewed by a request sent at at.
func (s *shared) renewedLocked(lease fence.Lease, id int64, at time.Time) {
	r := s.recs[lease.Key]
	if r == nil || r.busy > 0 || r.lease != id || r.owner != lease.Owner || (!r.unsure && r.token != lease.Token) {
		return
	}
	if r.unsure {
		// A record found ours by reading it: its token is now known.
		s.seq++
		r.seq, r.token, r.unsure, r.gone = s.seq, lease.Token, false, false
	}
	r.until = later(r.until, at.Add(lease.TTL))
}

// mine reports whether etcd lease id is, or was, one of the Locker's
// shared leases with a record of key on it, and returns the record's own
// end, on the monotonic clock.
func (s *shared) mine(key string, token fence.Token, id int64) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[key]
	if r == nil || r.busy > 0 || r.unsure || r.gone || r.lease != id || r.token != token {
		return time.Time{}, false
	}
	return r.until, true
}

// armLocked makes the sweep run at at, unless it runs earlier.
func (s *shared) armLocked(at time.Time) {
	if s.sweep == nil || (s.timer != nil && !s.timeAt.After(at)) {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.timeAt = at
	s.timer = time.AfterFunc(time.Until(at), s.sweep)
}

// due returns the entries whose own end passed and no call is on, by key,
// with the numbers of their latest changes, and arms the next sweep for
// the others.
func (s *shared) due() map[string]rec {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = nil
	now := time.Now()
	var out map[string]rec
	var next time.Time
	for k, r := range s.recs {
		switch {
		case r.gone:
		case r.busy == 0 && !r.until.After(now):
			if out == nil {
				out = make(map[string]rec)
			}
			out[k] = *r
		default:
			at := r.until
			if r.busy > 0 && at.Before(now.Add(time.Second)) {
				at = now.Add(time.Second) // look again once its call ended
			}
			if next.IsZero() || at.Before(next) {
				next = at
			}
		}
	}
	if !next.IsZero() {
		s.armLocked(next)
	}
	return out
}

// retry makes the sweep run again in a second.
func (s *shared) retry() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armLocked(time.Now().Add(time.Second))
}

// swept forgets the entry of key, deleted by the sweep or found another's,
// unless it changed since seq.
func (s *shared) swept(key string, seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.recs[key]; r != nil && r.seq == seq && r.busy == 0 {
		delete(s.recs, key)
	}
}
