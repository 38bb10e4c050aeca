package fence

// The lease book: for every lease a Locker gave out, the latest
// ValidUntil it computed. A lease is identified by its key, owner and
// token: any copy of it, the one Acquire returned or one returned by any
// Renew since, names the same lease, and Renew and Release judge it by the
// latest expiry the Locker computed for it, never by the copy's own
// ValidUntil alone.

import (
	"sync"
	"sync/atomic"
	"time"
)

// id is what identifies a lease.
type leaseID struct {
	key, owner string
	token      Token
}

func idOf(l Lease) leaseID { return leaseID{l.Key, l.Owner, l.Token} }

// entry is a lease of the book, found by its key.
type entry struct {
	owner string
	token Token
	until time.Time
}

func (e entry) is(l Lease) bool { return e.owner == l.Owner && e.token == l.Token }

// book maps leases to the latest ValidUntil given to them. The zero book
// is ready to use and safe for concurrent use. Entries of leases that ran
// out are swept as the book grows, so a lease that is never released (its
// holder crashed, or lost the answer to its Release) costs memory only
// until it expires.
//
// A key rarely has more than one lease in the book (one that ran out
// unreleased, and the next): the latest lease recorded for a key is
// found by the key alone, and the others by their whole id.
type book struct {
	mu    sync.Mutex
	byKey map[string]entry      // the latest lease recorded for each key
	more  map[leaseID]time.Time // the other leases
	sweep int                   // sweep once the book grows past this many entries
	n     atomic.Int64          // entries, read without mu: an empty book is not locked
}

// minSweep is the size below which the book never sweeps.
const minSweep = 64

// record notes lease's ValidUntil, unless a later one is known for it. now
// is the Locker's clock, for sweeping.
func (b *book) record(lease Lease, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byKey == nil {
		b.byKey = make(map[string]entry)
	}
	e, ok := b.byKey[lease.Key]
	switch {
	case ok && e.is(lease):
		if lease.ValidUntil.After(e.until) {
			e.until = lease.ValidUntil
			b.byKey[lease.Key] = e
		}
		return // the book did not grow
	case len(b.more) > 0:
		if cur, found := b.more[idOf(lease)]; found {
			if lease.ValidUntil.After(cur) {
				b.more[idOf(lease)] = lease.ValidUntil
			}
			return
		}
	}
	if ok { // make room for the latest lease of the key
		if b.more == nil {
			b.more = make(map[leaseID]time.Time)
		}
		b.more[leaseID{lease.Key, e.owner, e.token}] = e.until
	}
	b.byKey[lease.Key] = entry{owner: lease.Owner, token: lease.Token, until: lease.ValidUntil}
	if len(b.byKey)+len(b.more) > max(b.sweep, minSweep) {
		for k, e := range b.byKey {
			if !now.Before(e.until) {
				delete(b.byKey, k)
			}
		}
		for k, until := range b.more {
			if !now.Before(until) {
				delete(b.more, k)
			}
		}
		b.sweep = 2 * (len(b.byKey) + len(b.more))
	}
	b.n.Store(int64(len(b.byKey) + len(b.more)))
}

// validUntil returns the latest ValidUntil known for lease: the later of
// its own and the one recorded for its key, owner and token.
func (b *book) validUntil(lease Lease) time.Time {
	if b.n.Load() == 0 {
		return lease.ValidUntil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	until, ok := time.Time{}, false
	if e, found := b.byKey[lease.Key]; found && e.is(lease) {
		until, ok = e.until, true
	} else if len(b.more) > 0 {
		until, ok = b.more[idOf(lease)]
	}
	if ok && until.After(lease.ValidUntil) {
		return until
	}
	return lease.ValidUntil
}

// forget drops lease: it was released, or found no longer held.
func (b *book) forget(lease Lease) {
	if b.n.Load() == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, found := b.byKey[lease.Key]; found && e.is(lease) {
		delete(b.byKey, lease.Key)
	} else if len(b.more) > 0 {
		delete(b.more, idOf(lease))
	}
	b.n.Store(int64(len(b.byKey) + len(b.more)))
}

// len returns the number of leases in the book.
func (b *book) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.byKey) + len(b.more)
}
