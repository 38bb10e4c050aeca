package fence

// The lease book: for every lease a Locker gave out, the latest
// ValidUntil it computed. A lease is identified by its key, owner and
// token: any copy of it, the one Acquire returned or one returned by any
// Renew since, names the same lease, and Renew and Release judge it by the
// latest expiry the Locker computed for it, never by the copy's own
// ValidUntil alone.

import (
	"sync"
	"time"
)

// id is what identifies a lease.
type leaseID struct {
	key, owner string
	token      Token
}

func idOf(l Lease) leaseID { return leaseID{l.Key, l.Owner, l.Token} }

// book maps leases to the latest ValidUntil given to them. The zero book
// is ready to use and safe for concurrent use. Entries of leases that ran
// out are swept as the book grows, so a lease that is never released (its
// holder crashed, or lost the answer to its Release) costs memory only
// until it expires.
type book struct {
	mu    sync.Mutex
	until map[leaseID]time.Time
	sweep int // sweep once the map grows past this many entries
}

// minSweep is the size below which the book never sweeps.
const minSweep = 64

// record notes lease's ValidUntil, unless a later one is known for it. now
// is the Locker's clock, for sweeping.
func (b *book) record(lease Lease, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.until == nil {
		b.until = make(map[leaseID]time.Time)
	}
	k := idOf(lease)
	if cur, ok := b.until[k]; !ok || lease.ValidUntil.After(cur) {
		b.until[k] = lease.ValidUntil
	}
	if len(b.until) > max(b.sweep, minSweep) {
		for k, until := range b.until {
			if !now.Before(until) {
				delete(b.until, k)
			}
		}
		b.sweep = 2 * len(b.until)
	}
}

// validUntil returns the latest ValidUntil known for lease: the later of
// its own and the one recorded for its key, owner and token.
func (b *book) validUntil(lease Lease) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if until, ok := b.until[idOf(lease)]; ok && until.After(lease.ValidUntil) {
		return until
	}
	return lease.ValidUntil
}

// forget drops lease: it was released, or found no longer held.
func (b *book) forget(lease Lease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.until, idOf(lease))
}

// len returns the number of leases in the book.
func (b *book) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.until)
}
