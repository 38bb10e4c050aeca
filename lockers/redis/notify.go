package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/notify"
)

var _ driver.ReleaseNotifier = (*store)(nil)

// NotifyRelease implements driver.ReleaseNotifier. It returns once the
// locker's subscription to its release channel is confirmed by the
// server, so a release published after it returns reaches the channel.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return d.subs.subscribe(ctx, key)
}

// subscriber keeps one Pub/Sub subscription to a locker's release channel
// while anyone waits, and passes each message (a key) to the key's
// waiters.
type subscriber struct {
	c       goredis.UniversalClient
	channel string
	hub     notify.Hub

	mu      sync.Mutex
	waiters int
	ps      *goredis.PubSub
	stop    chan struct{} // closed to end the loop of ps
	done    chan struct{} // closed when the loop of ps has ended
	closed  bool
}

func newSubscriber(c goredis.UniversalClient, channel string) *subscriber {
	return &subscriber{c: c, channel: channel}
}

// subscribe adds a waiter for key, subscribing first if nobody waits yet.
func (s *subscriber) subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, errors.New("the locker is closed")
	}
	if s.ps == nil {
		ps := s.c.Subscribe(ctx, s.channel)
		m, err := ps.Receive(ctx)
		if err == nil {
			if sub, ok := m.(*goredis.Subscription); !ok || sub.Kind != "subscribe" {
				err = fmt.Errorf("SUBSCRIBE %s answered %v", s.channel, m)
			}
		}
		if err != nil {
			_ = ps.Close()
			return nil, nil, fmt.Errorf("subscribing to %s: %w", s.channel, err)
		}
		s.ps, s.stop, s.done = ps, make(chan struct{}), make(chan struct{})
		go s.loop(ps, s.stop, s.done)
	}
	s.waiters++
	c, unsubscribe := s.hub.Subscribe(key)
	var once sync.Once
	return c, func() {
		once.Do(func() {
			unsubscribe()
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.waiters--; s.waiters == 0 {
				s.end()
			}
		})
	}, nil
}

// end closes the subscription, if there is one. s.mu is held.
func (s *subscriber) end() {
	if s.ps == nil {
		return
	}
	close(s.stop)
	_ = s.ps.Close()
	<-s.done
	s.ps = nil
}

// close ends the subscription for good.
func (s *subscriber) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.end()
	s.hub.SignalAll() // the waiters ask the server again, then poll
}

// loop passes the messages of ps to the waiters. After a lost
// connection, go-redis subscribes again on a new one; messages published
// in between are lost, so every waiter is woken to ask the server again.
func (s *subscriber) loop(ps *goredis.PubSub, stop, done chan struct{}) {
	defer close(done)
	ctx := context.Background()
	for {
		m, err := ps.ReceiveTimeout(ctx, 30*time.Second)
		select {
		case <-stop:
			return
		default:
		}
		switch m := m.(type) {
		case *goredis.Message:
			s.hub.Signal(m.Payload)
			continue
		case *goredis.Subscription:
			s.hub.SignalAll() // subscribed again after a reconnect
			continue
		}
		if err == nil {
			continue // a pong
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			_ = ps.Ping(ctx) // keep an idle connection checked
			continue
		}
		s.hub.SignalAll()
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
