package objlock

import (
	"context"

	"github.com/fencekit/fence"
)

// Inspect implements driver.Locker. It reads key's object and records
// the version it saw, which starts (or continues) a clock-free wait for
// the lease to expire. ValidUntil is when d will consider the lease
// expired: in clock-free mode a full lease after d first saw its
// version; in trusted-clock mode the stored expiry (while the skew
// allowance runs, ValidUntil is zero and Held still true). Value is the
// value published with the lease while it is held.
func (d *Store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	name, err := d.name(key)
	if err != nil {
		return fence.LockInfo{}, err
	}
	st, err := d.look(ctx, key, name)
	if err != nil {
		return fence.LockInfo{}, err
	}
	info := fence.LockInfo{Key: key}
	if !st.found {
		return info, nil
	}
	info.Owner, info.Token = st.rec.owner, st.rec.token
	info.Held, info.ValidUntil = d.holding(st, d.clock.Now())
	if info.Held {
		info.Value = st.rec.value
	}
	return info, nil
}
