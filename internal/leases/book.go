// Package leases keeps, for the Lockers that judge expiry on their own
// clock (DynamoDB and Cloud Storage in both modes, Azure blob leases), the
// latest ValidUntil each lease was given. A lease is identified by its
// key, owner and token: any copy of it, the one Acquire returned or one
// returned by any Renew since, names the same lease, and Renew and Release
// judge it by the latest expiry the Locker computed for it, never by the
// copy's own ValidUntil alone.
package leases

import (
	"sync"
	"time"

	"github.com/fencekit/fence"
)

// id is what identifies a lease.
type id struct {
	key, owner string
	token      fence.Token
}

func idOf(l fence.Lease) id { return id{l.Key, l.Owner, l.Token} }

// Book maps leases to the latest ValidUntil given to them. The zero Book
// is ready to use and safe for concurrent use. Entries of leases that ran
// out are swept as the book grows, so a lease that is never released (its
// holder crashed, or lost the answer to its Release) costs memory only
// until it expires.
type Book struct {
	mu    sync.Mutex
	until map[id]time.Time
	sweep int // sweep once the map grows past this many entries
}

// minSweep is the size below which the book never sweeps.
const minSweep = 64

// Record notes lease's ValidUntil, unless a later one is known for it. now
// is the Locker's clock, for sweeping.
func (b *Book) Record(lease fence.Lease, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.until == nil {
		b.until = make(map[id]time.Time)
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

// ValidUntil returns the latest ValidUntil known for lease: the later of
// its own and the one recorded for its key, owner and token.
func (b *Book) ValidUntil(lease fence.Lease) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if until, ok := b.until[idOf(lease)]; ok && until.After(lease.ValidUntil) {
		return until
	}
	return lease.ValidUntil
}

// Forget drops lease: it was released, or found no longer held.
func (b *Book) Forget(lease fence.Lease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.until, idOf(lease))
}

// Len returns the number of leases in the book.
func (b *Book) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.until)
}
