package etcd

import (
	"sync"
	"time"
)

// maxSpares is the most spare etcd leases a Locker keeps for one TTL.
const maxSpares = 8

// maxTracked is the number of live etcd leases a Locker tracks beyond
// which it forgets those that have surely expired.
const maxTracked = 4096

// leases keeps, for a Locker, when each etcd lease it uses was last made
// to last its full TTL (granted or kept alive: the send time of that
// request, on the monotonic clock, so that the lease lasts at least its
// TTL from then), and its spare leases: leases that hold no key, kept to
// be reused by its next Acquire of the same TTL in whole seconds (a lease
// released by Release's transaction, or granted for an Acquire that found
// the key held). A spare is reused only while at least half its TTL is
// surely left, so that the record can be attached to it while a
// keepalive restarts its TTL, in parallel; a spare not reused expires on
// the server within its TTL, holding nothing.
type leases struct {
	mu     sync.Mutex
	live   map[int64]fresh   // by lease id
	spares map[int64][]spare // by TTL in seconds, newest last
}

type fresh struct {
	at   time.Time
	secs int64
}

type spare struct {
	id int64
	at time.Time // as in fresh
}

// refreshed records that lease id of secs seconds was granted or kept
// alive by a request sent at at.
func (l *leases) refreshed(id, secs int64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live == nil {
		l.live = make(map[int64]fresh)
	}
	if f, ok := l.live[id]; ok && f.at.After(at) {
		return
	}
	if len(l.live) >= maxTracked {
		now := time.Now()
		for k, f := range l.live {
			if f.at.Add(time.Duration(f.secs) * time.Second).Before(now) {
				delete(l.live, k)
			}
		}
	}
	l.live[id] = fresh{at: at, secs: secs}
}

// forget forgets lease id.
func (l *leases) forget(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.live, id)
}

// release makes lease id, whose key was just deleted, a spare, if it is
// tracked.
func (l *leases) release(id int64) {
	l.mu.Lock()
	f, ok := l.live[id]
	delete(l.live, id)
	l.mu.Unlock()
	if ok {
		l.addSpare(id, f.secs, f.at)
	}
}

// addSpare puts lease id, of secs seconds, refreshed at at, aside.
func (l *leases) addSpare(id, secs int64, at time.Time) {
	if secs < 1 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.spares == nil {
		l.spares = make(map[int64][]spare)
	}
	s := l.spares[secs]
	if len(s) == maxSpares {
		s = append(s[:0], s[1:]...) // drop the oldest
	}
	l.spares[secs] = append(s, spare{id: id, at: at})
}

// takeSpare returns a spare lease of secs seconds with at least half its
// TTL surely left, and when it was refreshed; ok is false when there is
// none. Older spares are dropped.
func (l *leases) takeSpare(secs int64) (id int64, at time.Time, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.spares[secs]
	limit := time.Now().Add(-time.Duration(secs) * time.Second / 2)
	for len(s) > 0 {
		sp := s[len(s)-1]
		s = s[:len(s)-1]
		if sp.at.After(limit) {
			l.spares[secs] = s
			return sp.id, sp.at, true
		}
	}
	delete(l.spares, secs)
	return 0, time.Time{}, false
}
