package election

import (
	"context"
	"fmt"
	"time"

	"github.com/fencekit/fence"
)

// Leader is a term as anyone can see it from the store: its token and the
// value its leader published, never the owner id (a secret that would
// let its holder release or renew the lease).
type Leader struct {
	// Term is the term's fencing token. Every term has a higher one than
	// every term before it, so a follower that remembers the highest Term
	// it saw can refuse an older leader. 0 when nobody leads.
	Term fence.Token
	// Value is what the leader published (Options.Value,
	// Candidate.Proclaim): its address, say. Empty when it published
	// nothing, and always empty on a store that keeps no values (see the
	// package documentation).
	Value string
	// ValidUntil is when the term's lease runs out unless the leader
	// renews it, on the follower's clock, as the Locker's Inspect reports
	// it; zero where the store does not say.
	ValidUntil time.Time
}

// leaderOf is the Leader that info shows, or the zero Leader when the key
// is free.
func leaderOf(info fence.LockInfo) Leader {
	if !info.Held {
		return Leader{}
	}
	return Leader{Term: info.Token, Value: info.Value, ValidUntil: info.ValidUntil}
}

// CurrentLeader reads key once through locker and returns the leader of
// the running term and true, or false when nobody leads. It is one
// Locker.Inspect; to follow the leader as terms come and go, use Observe.
// It returns an error matching fence.ErrInvalid for a nil locker or a
// key the locker refuses, and the store's error when the read fails.
func CurrentLeader(ctx context.Context, locker *fence.Locker, key string) (Leader, bool, error) {
	if locker == nil {
		return Leader{}, false, invalid("locker", "nil")
	}
	info, err := locker.Inspect(ctx, key)
	if err != nil {
		return Leader{}, false, err
	}
	l := leaderOf(info)
	return l, l.Term != 0, nil
}

// End says how a term ended, as far as a follower can tell by reading
// the key.
type End int

const (
	// NotEnded: the term of Change.Previous is still running (or there
	// was none).
	NotEnded End = iota
	// Released: the key was found free before the lease's expiry. The
	// leader released it (it resigned, its function returned or its
	// campaign stopped) or an operator broke it; a follower cannot tell
	// which.
	Released
	// Expired: the term was found over only once its expiry
	// (Leader.ValidUntil as last read) had passed: most likely the leader
	// stopped renewing (it crashed, or was cut off from the store); a
	// release seen only after the expiry (a slow read, no notification)
	// looks the same.
	Expired
	// Superseded: a later term was found before the lease's expiry,
	// without the key being seen free in between: it was released or
	// broken, and taken again, between two reads. (On a store that does
	// not say when leases run out, it may also have expired.)
	Superseded
	// Vacated: the key was found free, on a store that does not say when
	// its leases run out (LockInfo.ValidUntil is zero: ZooKeeper). The
	// term was released, broken or expired; a follower cannot tell which.
	Vacated
)

func (e End) String() string {
	switch e {
	case NotEnded:
		return "not ended"
	case Released:
		return "released"
	case Expired:
		return "expired"
	case Superseded:
		return "superseded"
	case Vacated:
		return "vacated"
	}
	return fmt.Sprintf("End(%d)", int(e))
}

// Change is what a follower learned since the Change before it: the
// leader then (Previous) and now (Leader), and how Previous's term
// ended, if it did. A follower that reads its changes late gets only the
// latest, compared with the last one it took: the states in between are
// skipped, never the latest (see Observe).
type Change struct {
	// Leader is the leader now; its Term is 0 when nobody leads.
	Leader Leader
	// Previous is the leader the Change before this one showed; zero in
	// the first Change, which shows the state Observe found.
	Previous Leader
	// Ended says how Previous's term ended; NotEnded when it is still
	// running (Leader has the same Term) or there was none.
	Ended End
}

// Started reports whether a term started: someone leads now, in
// another term than Previous's.
func (c Change) Started() bool {
	return c.Leader.Term != 0 && c.Leader.Term != c.Previous.Term
}

// ValueChanged reports whether the running term's leader published a new
// value.
func (c Change) ValueChanged() bool {
	return c.Leader.Term != 0 && c.Leader.Term == c.Previous.Term && c.Leader.Value != c.Previous.Value
}

// endOf says how the term of prev ended, given what a read answered at
// answered found (now, a Leader, zero if the key is free, and token, the
// key's last token). A read answered before prev's expiry found it ended
// by other means; one answered after may have seen it expire.
func endOf(prev, now Leader, token fence.Token, answered time.Time) End {
	switch {
	case prev.Term == 0 || now.Term == prev.Term && now.Term != 0:
		return NotEnded
	case !prev.ValidUntil.IsZero() && !answered.Before(prev.ValidUntil):
		return Expired
	case now.Term != 0 || token != prev.Term:
		return Superseded
	case prev.ValidUntil.IsZero():
		return Vacated
	}
	return Released
}

// merge returns the Change that says what a and then b (which came
// right after a) said together, compared with a's Previous.
func merge(a, b Change) Change {
	c := Change{Previous: a.Previous, Leader: b.Leader}
	if c.Previous.Term != 0 && c.Previous.Term != c.Leader.Term {
		c.Ended = a.Ended
		if c.Ended == NotEnded {
			c.Ended = b.Ended
		}
	}
	return c
}

// empty reports whether c tells nothing: the same term (or none) with the
// same value.
func (c Change) empty() bool {
	return c.Leader.Term == c.Previous.Term && c.Leader.Value == c.Previous.Value
}
