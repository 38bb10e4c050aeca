package objlock

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/fencekit/fence"
)

// Acquire implements driver.Locker. It decides on the last state of
// key's object that d knows (read first when it knows none) and writes the
// next token on the condition that the object is that version: it must not
// exist, or must still be the free or expired record d saw. When the
// remembered state was stale, the object is read once and the decision
// made again; Acquire never waits for a holder. A lost race or a live
// lease returns a *fence.HeldError with the holder, its token and, where
// known, when d will consider it expired. A lost race after which the
// key is free (a concurrent release, or concurrent writes that the store
// refused alike) is tried again, up to Config.RetryFreeRaces times.
func (d *Store) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	name, err := d.name(key)
	if err != nil {
		return fence.Lease{}, err
	}
	st, err := d.remembered(ctx, key, name)
	if err != nil {
		return fence.Lease{}, err
	}
	raced := 0 // lost races after which no lease was held
	for {
		now := d.clock.Now()
		if held, until := d.holding(st, now); held {
			if st.cached {
				// The holder may have let go since: look again.
				if st, err = d.look(ctx, key, name); err != nil {
					return fence.Lease{}, err
				}
				continue
			}
			return fence.Lease{}, &fence.HeldError{Key: key, Owner: st.rec.owner, Token: st.rec.token, ValidUntil: until}
		}
		token := fence.Token(1)
		if st.found {
			if st.rec.token == math.MaxUint64 {
				return fence.Lease{}, &fence.CorruptError{Key: key, Reason: "the token is at its largest value; no higher one can be issued"}
			}
			token = st.rec.token + 1
		}
		rec := d.newRecord(owner, token, ttl, now)
		version, err := d.write(ctx, name, st.version, rec.encode())
		if err == nil {
			d.wrote(name, version, rec, now)
			return fence.Lease{Key: key, Owner: owner, Token: token, TTL: ttl, ValidUntil: now.Add(ttl)}, nil
		}
		if !errors.Is(err, ErrConflict) {
			return fence.Lease{}, err
		}
		// Another write came first. Read what it left: a decision made on
		// a stale memory is made again; a lost race is reported.
		wasCached := st.cached
		if st, err = d.look(ctx, key, name); err != nil {
			return fence.Lease{}, err
		}
		if wasCached {
			continue
		}
		if held, _ := d.holding(st, d.clock.Now()); !held && raced < d.freeRace {
			// No lease won: the write that came first was a release, or
			// the store refused concurrent writes and none landed.
			raced++
			continue
		}
		he := &fence.HeldError{Key: key}
		if st.found && st.rec.held {
			he.Owner, he.Token = st.rec.owner, st.rec.token
			_, he.ValidUntil = d.holding(st, d.clock.Now())
		}
		return fence.Lease{}, he
	}
}
