package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// rewatchDelay is how long a release watch waits before it is set up
// again after the server ended it (a lost leader, a lost connection).
const rewatchDelay = 200 * time.Millisecond

// NotifyRelease implements driver.ReleaseNotifier with an etcd watch on
// key's lock record that passes on its deletions (a Release, a Break, or
// the server revoking an expired lease, so that waiters wake on expiry
// too) and its puts other than its creation (a Publish, which puts the
// record again unchanged). It returns once the server has set up the watch (etcd's created
// notification), so a deletion after it returns is never missed.
//
// The watch asks for a leader (clientv3.WithRequireLeader): a member that
// loses its leader ends it. The watch is then set up again, after
// rewatchDelay, and signals once it is, since a release may have happened
// in between; a signal may therefore be spurious. ctx bounds the setting
// up only; stop ends the watch and waits for its goroutine to return.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	wch, err := d.watch(ctx, wctx, key)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	c := make(chan struct{}, 1)
	signal := func() {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for resp := range wch {
				for _, ev := range resp.Events {
					if ev.Type == clientv3.EventTypeDelete || !ev.IsCreate() {
						signal()
						break
					}
				}
			}
			// The watch ended: stopped, or ended by the server.
			for {
				select {
				case <-wctx.Done():
					return
				case <-time.After(rewatchDelay):
				}
				again, err := d.watch(wctx, wctx, key)
				if err == nil {
					wch = again
					signal()
					break
				}
			}
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	return c, stop, nil
}

// watch sets up a watch of key's lock record that lives as long
// as wctx, and waits, as long as ctx, until the server has created it.
func (d *store) watch(ctx, wctx context.Context, key string) (clientv3.WatchChan, error) {
	wch := d.c.Watch(clientv3.WithRequireLeader(wctx), d.held(key), clientv3.WithCreatedNotify())
	select {
	case resp, ok := <-wch:
		switch {
		case !ok:
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, errors.New("watch the key: the watch ended before it was set up")
		case resp.Err() != nil:
			return nil, fmt.Errorf("watch the key: %w", resp.Err())
		case !resp.Created:
			return nil, errors.New("watch the key: the server sent events before it confirmed the watch")
		}
		return wch, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
