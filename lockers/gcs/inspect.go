package gcs

import (
	"context"

	"github.com/fencekit/fence"
)

// Inspect implements fence.Locker. It reads key's object and records the
// generation it saw, which starts (or continues) a clock-free Locker's
// wait for the lease to expire. ValidUntil is when l will consider the
// lease expired: in clock-free mode a full lease after l first saw its
// generation; in trusted-clock mode the stored expiry (while the skew
// allowance runs, ValidUntil is zero and Held still true).
func (l *Locker) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	name, err := l.objectName(key)
	if err != nil {
		return fence.LockInfo{}, err
	}
	st, err := l.look(ctx, key, name)
	if err != nil {
		return fence.LockInfo{}, err
	}
	info := fence.LockInfo{Key: key}
	if !st.found {
		return info, nil
	}
	info.Owner, info.Token = st.rec.owner, st.rec.token
	info.Held, info.ValidUntil = l.holding(st, l.clock.Now())
	return info, nil
}
