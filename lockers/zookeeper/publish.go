package zookeeper

import (
	"context"
	"errors"
	"fmt"

	"github.com/z-division/go-zookeeper/zk"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.Publisher = (*store)(nil)

// Publish implements driver.Publisher: it sets the data of the lease's
// lock node to its owner id and the value (see the package doc, "Public
// values"), on the condition that the node's data version is the one of
// this store's latest write (set data with a version). The node is the
// lease's own (its path holds a random UUID of the acquisition, and it
// is ephemeral), so the value ends with the lease, and the watch of
// NotifyRelease on the holder's node fires on the change. A version that
// moved on (a Publish whose answer was lost) is read again, with the
// node's czxid and session, and the write sent once more.
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	_, err := run(ctx, func() (struct{}, error) { return struct{}{}, d.publish(lease, value) })
	return err
}

func (d *store) publish(lease fence.Lease, value string) error {
	h, err := d.lookup(lease)
	if err != nil {
		return err
	}
	defer h.mu.Unlock()
	data := encodeNodeValue(lease.Owner, value)
	for range 2 {
		st, err := d.c.Set(h.path, data, h.version)
		switch {
		case err == nil:
			h.version = st.Version
			return nil
		case errors.Is(err, zk.ErrNoNode):
			return d.lost(lease.Token, h, "its lock node is gone: broken, or the session ended")
		case !errors.Is(err, zk.ErrBadVersion):
			return fmt.Errorf("set the lock node's data: %w", err)
		}
		_, st, err = d.c.Get(h.path)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return d.lost(lease.Token, h, "its lock node is gone: broken, or the session ended")
		case err != nil:
			return fmt.Errorf("read the lock node: %w", err)
		case st.Czxid != int64(lease.Token) || st.EphemeralOwner != d.c.SessionID():
			return d.lost(lease.Token, h, fmt.Sprintf("its lock node has czxid %d of session 0x%x", st.Czxid, st.EphemeralOwner))
		}
		h.version = st.Version
	}
	return errors.New("the lock node's data changed twice during the publish")
}
