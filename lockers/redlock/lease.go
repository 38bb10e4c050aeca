package redlock

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
)

// count tallies the replies of a renew, release or break round.
type count struct {
	ok, not, answered int
}

func tally(replies []reply) count {
	var c count
	for _, r := range replies {
		if r.err != nil {
			continue
		}
		c.answered++
		switch r.kind {
		case "ok":
			c.ok++
		case "not":
			c.not++
		}
	}
	return c
}

// Renew implements driver.Locker: the lease's lock is extended on
// every master that still holds it; the renewal counts if a quorum did,
// before the validity ran out.
func (d *store) Renew(ctx context.Context, lease fence.Lease) error {
	start := d.o.Clock.Now()
	value := record{token: lease.Token, owner: lease.Owner}.String()
	ms := millis(lease.TTL)
	keys := d.keys(lease.Key)
	replies := d.each(ctx, lease.Key, func(ctx context.Context, _ int, c Client) *goredis.Cmd {
		return renewScript.Run(ctx, c, keys, value, ms)
	})
	return d.renewed(lease, start, replies)
}

// renewed is the outcome of the renewal of lease sent at start, from the
// masters' replies.
func (d *store) renewed(lease fence.Lease, start time.Time, replies []reply) error {
	if err := corrupt(replies); err != nil {
		return err
	}
	c := tally(replies)
	switch {
	case c.ok >= d.quorum:
		if left := d.validity(start, lease.TTL); left <= 0 {
			return fmt.Errorf("a quorum of masters renewed the lease %v after the request, leaving no validity of the %v TTL (drift %v)",
				d.o.Clock.Now().Sub(start), lease.TTL, d.drift(lease.TTL))
		}
		return nil
	case c.not > len(d.masters)-d.quorum:
		return &fence.NotHeldError{Key: lease.Key, Reason: fmt.Sprintf("%d of %d masters no longer hold it, a quorum is %d", c.not, len(d.masters), d.quorum)}
	}
	return d.quorumError("renew", c.answered, replies)
}

// Release implements driver.Locker: compare-and-delete on every
// master. It succeeds if a quorum deleted the lease's lock, and answers
// not held when so many masters did not hold it that it was not held on
// a quorum.
func (d *store) Release(ctx context.Context, lease fence.Lease) error {
	value := record{token: lease.Token, owner: lease.Owner}.String()
	keys := d.keys(lease.Key)
	replies := d.each(ctx, lease.Key, func(ctx context.Context, _ int, c Client) *goredis.Cmd {
		return releaseScript.Run(ctx, c, keys, value, d.channel, lease.Key)
	})
	if err := corrupt(replies); err != nil {
		return err
	}
	c := tally(replies)
	switch {
	case c.ok >= d.quorum:
		return nil
	case c.not > len(d.masters)-d.quorum:
		return &fence.NotHeldError{Key: lease.Key, Reason: fmt.Sprintf("%d of %d masters did not hold it, a quorum is %d", c.not, len(d.masters), d.quorum)}
	}
	return d.quorumError("release", c.answered, replies)
}

// Break implements driver.Locker: it deletes the lock on every
// master, whoever holds it, and keeps the counters, which need no bump:
// the broken holder's token is on a quorum already (see the package doc).
// It succeeds once a quorum has no lock left, so that no owner holds a
// quorum.
func (d *store) Break(ctx context.Context, key string) error {
	keys := d.keys(key)
	replies := d.each(ctx, key, func(ctx context.Context, _ int, c Client) *goredis.Cmd {
		return breakScript.Run(ctx, c, keys, d.channel, key)
	})
	if err := corrupt(replies); err != nil {
		return err
	}
	if c := tally(replies); c.ok < d.quorum {
		return d.quorumError("break", c.answered, replies)
	}
	return nil
}

// Inspect implements driver.Locker: it reads both records on every
// master and needs a quorum of answers. The key is held if one lock
// record (owner and token) is on a quorum; its ValidUntil is when fewer
// than a quorum of its copies remain, and its Value the one a quorum of
// masters hold with its token (see agreedValue). Otherwise the token is
// the highest counter the masters reported, with its owner.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	start := d.o.Clock.Now()
	keys := d.keys(key)
	keys = append(keys, d.valueKey(key))
	replies := d.each(ctx, key, func(ctx context.Context, _ int, c Client) *goredis.Cmd {
		return inspectScript.Run(ctx, c, keys)
	})
	if err := corrupt(replies); err != nil {
		return fence.LockInfo{}, err
	}
	var answered int
	locks := map[string][]int64{}
	var last record
	for _, r := range replies {
		if r.err != nil {
			continue
		}
		answered++
		if r.lock != "" {
			locks[r.lock] = append(locks[r.lock], r.pttl)
		}
		if r.ctr != "" {
			c, err := parseRecord(r.ctr)
			if err != nil {
				return fence.LockInfo{}, &fence.CorruptError{Key: key, Reason: "the counter record", Err: err}
			}
			if c.token > last.token {
				last = c
			}
		}
	}
	if answered < d.quorum {
		return fence.LockInfo{}, d.quorumError("inspect", answered, replies)
	}
	for value, pttls := range locks {
		if len(pttls) < d.quorum {
			continue
		}
		h, err := parseRecord(value)
		if err != nil {
			return fence.LockInfo{}, &fence.CorruptError{Key: key, Reason: "the lock record", Err: err}
		}
		left := time.Duration(kthLargest(pttls, d.quorum)) * time.Millisecond
		v, err := d.agreedValue(key, h.token, replies)
		if err != nil {
			return fence.LockInfo{}, err
		}
		return fence.LockInfo{Key: key, Held: true, Owner: h.owner, Token: h.token, ValidUntil: start.Add(left), Value: v}, nil
	}
	return fence.LockInfo{Key: key, Owner: last.owner, Token: last.token}, nil
}
