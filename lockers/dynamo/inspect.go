package dynamo

import (
	"context"

	"github.com/fencekit/fence"
)

// Inspect implements driver.Locker with one consistent GetItem. In
// clock-free mode it records what it saw, like a failed Acquire, so that
// a later Acquire can take over an expired lease; Held is then false
// once this Locker has seen the item
// unchanged for its lease, and ValidUntil is when that will be. In
// trusted-clock mode Held is false once the stored expiry plus
// MaxClockSkew has passed, and ValidUntil is the stored expiry (zero
// within the skew allowance). Value is the value published with the
// lease while it is held. An item that breaks the table's invariants
// gets an error matching fence.ErrCorrupt.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	item, err := d.read(ctx, key)
	if err != nil {
		return fence.LockInfo{}, err
	}
	now := d.clock.Now()
	r, found, err := parseItem(key, item)
	if err != nil {
		return fence.LockInfo{}, err
	}
	if !found {
		return fence.LockInfo{Key: key}, nil
	}
	held, until := d.holding(key, r, now)
	info := fence.LockInfo{Key: key, Held: held, Owner: r.owner, Token: r.token, ValidUntil: until}
	if held {
		if info.Value, err = parseValue(key, item, r.token); err != nil {
			return fence.LockInfo{}, err
		}
	}
	return info, nil
}
