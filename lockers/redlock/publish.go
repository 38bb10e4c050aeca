package redlock

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.Publisher = (*store)(nil)

// valueKey is the value record of key on every master.
func (d *store) valueKey(key string) string { return d.o.Prefix + "value:" + key }

// Publish implements driver.Publisher, as Renew does: on every master at
// once, a script sets the value record to "TOKEN VALUE" if the master's
// lock is the lease's, and publishes the key on the release channel. It
// succeeds if a quorum wrote it, and answers not held when so many
// masters did not hold the lease that it was not held on a quorum. A
// Publish that reached fewer than a quorum returns an error, and Inspect
// goes on reporting the value a quorum holds (see agreedValue).
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	rec := record{token: lease.Token, owner: lease.Owner}.String()
	keys := append(d.keys(lease.Key), d.valueKey(lease.Key))
	replies := d.each(ctx, lease.Key, func(ctx context.Context, _ int, c Client) *goredis.Cmd {
		return publishScript.Run(ctx, c, keys, rec, lease.Token.String(), value, d.channel, lease.Key)
	})
	if err := corrupt(replies); err != nil {
		return err
	}
	c := tally(replies)
	switch {
	case c.ok >= d.quorum:
		return nil
	case c.not > len(d.masters)-d.quorum:
		return &fence.NotHeldError{Key: lease.Key, Reason: fmt.Sprintf("%d of %d masters no longer hold it, a quorum is %d", c.not, len(d.masters), d.quorum)}
	}
	return d.quorumError("publish", c.answered, replies)
}

// agreedValue returns the value that a quorum of the masters in replies
// (an Inspect's) hold with token, the holder's: "" when no value has a
// quorum (nothing published, or a Publish that reached a minority only,
// whose value is not reported while a quorum still holds the one before
// it, or none). A value record that does not parse is a
// *fence.CorruptError.
func (d *store) agreedValue(key string, token fence.Token, replies []reply) (string, error) {
	votes := map[string]int{}
	for _, r := range replies {
		if r.err != nil || r.val == "" {
			continue
		}
		t, v, err := parseValue(r.val)
		if err != nil {
			return "", &fence.CorruptError{Key: key, Reason: "the value record", Err: err}
		}
		if t == token {
			votes[v]++
		}
	}
	for v, n := range votes {
		if n >= d.quorum {
			return v, nil
		}
	}
	return "", nil
}
