package sqlite

import (
	"context"

	"sync"
	"time"

	"github.com/fencekit/fence"
)

// NotifyRelease implements driver.ReleaseNotifier. A release or break by
// this Locker wakes its waiters at once; one by another process (or
// another Locker on the file) is seen by the Locker's poller, which
// reads the rows of the keys waited for every PollInterval while anyone
// waits, and wakes the waiters of a key it finds free or expired, or
// whose lease or published value changed since its last read.
// NotifyRelease reads the key's row, with ctx, before it returns, and
// the poller measures changes against that read, so that a change after
// it returns is never missed. When that read fails, the poller's first
// read of the key that succeeds wakes the waiters, whatever it shows.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	c, stop := d.hub.Subscribe(key)
	unwatch := d.poll.watch(ctx, key)
	var once sync.Once
	return c, func() {
		once.Do(func() {
			stop()
			unwatch()
		})
	}, nil
}

// poller reads the rows of the keys waited for, while there are any.
type poller struct {
	d     *store
	every time.Duration

	mu     sync.Mutex
	keys   map[string]int     // waiters per key
	seen   map[string]seen    // each key's row at the last read
	cancel context.CancelFunc // stops the running loop; nil when none runs
}

// watch counts a waiter of key, starting the loop for the first, reads
// the key's row with ctx as the point the poller's next read is compared
// to, and returns what ends that waiter's count, stopping the loop after
// the last.
func (p *poller) watch(ctx context.Context, key string) func() {
	unwatch := p.count(key)
	r, found, err := p.d.read(ctx, key)
	if err != nil {
		return unwatch // no starting point: the first read signals
	}
	now := seen{found: found, token: r.token, value: r.value, expires: r.expires}
	p.mu.Lock()
	last, known := p.seen[key]
	if _, waited := p.keys[key]; waited {
		if p.seen == nil {
			p.seen = make(map[string]seen)
		}
		p.seen[key] = now
	}
	p.mu.Unlock()
	if known && last.changed(now) {
		// A change since the poller's last read, which the waiters
		// that came before this one are yet to hear of.
		p.d.hub.Signal(key)
	}
	return unwatch
}

// count counts a waiter of key, starting the loop for the first, and
// returns what ends that waiter's count, stopping the loop after the last.
func (p *poller) count(key string) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.keys == nil {
		p.keys = make(map[string]int)
	}
	p.keys[key]++
	if p.cancel == nil {
		var ctx context.Context
		ctx, p.cancel = context.WithCancel(context.Background())
		go p.loop(ctx)
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.keys[key]--; p.keys[key] <= 0 {
			delete(p.keys, key)
			delete(p.seen, key)
		}
		if len(p.keys) == 0 && p.cancel != nil {
			p.cancel()
			p.cancel = nil
		}
	}
}

// loop wakes the waiters of every key waited for that is free or expired,
// or changed since the last read (or was never read before), every
// p.every, until ctx ends. A failed read wakes nobody: the waiters
// poll the store themselves as well (fence.SessionOptions.PollInterval).
func (p *poller) loop(ctx context.Context) {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.mu.Lock()
		keys := make([]string, 0, len(p.keys))
		for k := range p.keys {
			keys = append(keys, k)
		}
		p.mu.Unlock()
		for _, key := range keys {
			r, found, err := p.d.read(ctx, key)
			if err != nil {
				continue
			}
			now := seen{found: found, token: r.token, value: r.value, expires: r.expires}
			p.mu.Lock()
			last, known := p.seen[key]
			if _, waited := p.keys[key]; waited {
				if p.seen == nil {
					p.seen = make(map[string]seen)
				}
				p.seen[key] = now
			}
			p.mu.Unlock()
			if !known || !found || !r.heldAt(p.d.now()) || last.changed(now) {
				p.d.hub.Signal(key)
			}
		}
	}
}

// seen is what the poller last read of a key: whether it has a row, the
// lease's token, the value published with it and the lease's expiry.
type seen struct {
	found   bool
	token   fence.Token
	value   string
	expires int64
}

// changed reports whether b shows a release, a break, another lease or
// another value than s: a renewal (a later expiry alone) is no change.
func (s seen) changed(b seen) bool {
	return s.found != b.found || s.token != b.token || s.value != b.value || (s.expires != 0) != (b.expires != 0)
}
