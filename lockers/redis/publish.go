package redis

import (
	"context"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.Publisher = (*store)(nil)

// Publish implements driver.Publisher: one script that, if the lock key
// still holds the lease's token and owner, sets the value and its token
// in the counter's fields value and vtoken, and announces it on the
// release channel as a release is announced, so that waiters and
// followers look again. Inspect reports the value only while the lock
// key holds that token. It does not WAIT, even with MinReplicas: a value
// lost in a failover is published again by its holder, and no token
// depends on it.
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	r, err := d.script(ctx, publishScript, lease.Key, d.keys(lease.Key), lockValue(lease.Token, lease.Owner), value, d.channel, lease.Key)
	if err != nil {
		return err
	}
	return done(r, lease.Key)
}
