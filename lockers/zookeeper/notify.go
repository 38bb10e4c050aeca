package zookeeper

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/z-division/go-zookeeper/zk"
)

// rewatchDelay is how long a release watch waits before it looks again
// after a request failed (a lost connection, a server without a leader).
const rewatchDelay = 200 * time.Millisecond

// NotifyRelease implements driver.ReleaseNotifier as Curator's waiters do:
// it watches the first node under key's lock path (the holder) and
// signals when that node is deleted (a release, a Break, a lease this
// store let expire, or the end of the holder's session) or its data
// changes (a Publish), then watches
// the next holder. While the key has no lock node it signals (the key is
// free) and watches the lock path's children for the next holder. A
// watch lost with the connection or the session signals too, since a
// release may have been missed. Signals may be spurious: a contender's
// node that was first for a moment, and was deleted since its Acquire
// lost, wakes the waiters.
//
// It returns once the first watch is set (ctx bounds that only), so a
// release after it returns is never missed. stop ends the watching; a
// request in flight then ends on its own.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	c := make(chan struct{}, 1)
	signal := func() {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	quit := make(chan struct{})
	parent := d.lockPath(key)
	w, err := run(ctx, func() (<-chan zk.Event, error) { return d.watchHolder(parent, signal) })
	if err != nil {
		close(quit)
		return nil, nil, err
	}
	go func() {
		for {
			select {
			case <-quit:
				return
			case ev := <-w:
				if ev.Type == zk.EventNodeDeleted || ev.Type == zk.EventNodeDataChanged || ev.Type == zk.EventNotWatching || ev.Err != nil {
					signal()
				}
			}
			for {
				w, err = d.watchHolder(parent, signal)
				if err == nil {
					break
				}
				signal()
				select {
				case <-quit:
					return
				case <-time.After(rewatchDelay):
				}
			}
		}
	}()
	var once sync.Once
	return c, func() { once.Do(func() { close(quit) }) }, nil
}

// watchHolder sets a watch on the holder of the lock path parent and
// returns its channel: on the first lock node, or, when there is none
// (and it signals), on the children of parent or, when parent is
// missing, on its creation.
func (d *store) watchHolder(parent string, signal func()) (<-chan zk.Event, error) {
	for {
		// A children watch only where needed: each one stays with the
		// client until the children change.
		children, _, err := d.c.Children(parent)
		var cw <-chan zk.Event
		if err == nil && len(children) == 0 {
			children, _, cw, err = d.c.ChildrenW(parent)
		}
		if errors.Is(err, zk.ErrNoNode) {
			signal()
			exists, _, ew, err := d.c.ExistsW(parent)
			if err != nil {
				return nil, err
			}
			if exists {
				continue
			}
			return ew, nil
		}
		if err != nil {
			return nil, err
		}
		if len(children) == 0 {
			signal()
			return cw, nil
		}
		sortChildren(children)
		exists, _, ew, err := d.c.ExistsW(parent + "/" + children[0])
		if err != nil {
			return nil, err
		}
		if exists {
			return ew, nil
		}
		signal() // deleted since the listing
	}
}
