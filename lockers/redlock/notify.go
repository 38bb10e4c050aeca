package redlock

import (
	"context"
	"errors"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence/internal/notify"
)

// notifier passes the release notifications of every master to the
// Locker's waiters: one subscription per master to the release channel,
// opened on the first wait and kept until Close. See the package doc,
// "Release notifications".
type notifier struct {
	d   *store
	hub notify.Hub

	mu      sync.Mutex
	started bool
	closed  bool
	active  int           // masters whose subscription was confirmed once
	up      chan struct{} // closed when a quorum was confirmed
	cancel  context.CancelFunc
	subs    []*goredis.PubSub // closed by close, which ends their Receive
	wg      sync.WaitGroup
}

func newNotifier(d *store) *notifier { return &notifier{d: d, up: make(chan struct{})} }

// errClosed is NotifyRelease's answer after Close.
var errClosed = errors.New("the locker is closed")

// NotifyRelease implements driver.ReleaseNotifier. It returns once the
// subscriptions of a quorum of masters are confirmed: a Release or Break
// that succeeds publishes on a quorum, which meets that one.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	n := d.notes
	up, err := n.start()
	if err != nil {
		return nil, nil, err
	}
	c, stop := n.hub.Subscribe(key)
	select {
	case <-up:
		return c, stop, nil
	case <-ctx.Done():
		stop()
		return nil, nil, ctx.Err()
	}
}

// start opens the subscriptions, once.
func (n *notifier) start() (<-chan struct{}, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errClosed
	}
	if !n.started {
		n.started = true
		ctx, cancel := context.WithCancel(context.Background())
		n.cancel = cancel
		for _, c := range n.d.masters {
			n.wg.Go(func() { n.listen(ctx, c) })
		}
	}
	return n.up, nil
}

// listen receives the notifications of one master until ctx ends. After
// a lost connection, go-redis subscribes again when it reconnects; what
// was published in between is lost, so every waiter is woken to ask the
// masters again.
func (n *notifier) listen(ctx context.Context, c Client) {
	ps := c.Subscribe(ctx, n.d.channel)
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		ps.Close()
		return
	}
	n.subs = append(n.subs, ps)
	n.mu.Unlock()
	confirmed := false
	backoff := 50 * time.Millisecond
	for {
		msg, err := ps.Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			n.hub.SignalAll()
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		switch m := msg.(type) {
		case *goredis.Message:
			n.hub.Signal(m.Payload)
		case *goredis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			if confirmed {
				n.hub.SignalAll() // subscribed again after a reconnect
				continue
			}
			confirmed = true
			n.mu.Lock()
			if n.active++; n.active == n.d.quorum {
				close(n.up)
			}
			n.mu.Unlock()
		}
	}
}

// close ends the subscriptions and waits for them.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	cancel, subs := n.cancel, n.subs
	n.subs = nil
	n.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	for _, ps := range subs {
		_ = ps.Close()
	}
	n.wg.Wait()
}
