package nats

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fencekit/fence"
)

// NotifyRelease implements driver.ReleaseNotifier with a KV watch of
// key's entry (an ordered consumer of the bucket's stream, filtered to
// the key): the channel receives a value when the entry is written as
// free (a Release or a Break), taken by another lease, published
// (another value), deleted or purged, or does not parse; and when the
// held record the watch last delivered has stayed unchanged for its
// lease duration on d's clock, the moment d's own Acquire may take it
// over. A renewal (the same lease and value) wakes nobody. It returns
// once the server has created the watch's consumer, which delivers the
// entry's latest revision first and every later one, so no release after
// it returns is missed.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	kv, err := d.bind(ctx)
	if err != nil {
		return nil, nil, err
	}
	name := keyName(key)
	// nats.go ends a watch when the context it was made with ends, but a
	// notification lasts until stop: the watch gets a context of its own,
	// which ctx cancels only while the watch is being made.
	wctx, cancelWatch := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	made := false
	unguard := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !made {
			cancelWatch()
		}
	})
	w, err := kv.Watch(wctx, name)
	mu.Lock()
	made = true
	mu.Unlock()
	unguard()
	if err != nil {
		cancelWatch()
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("watch %q: %w (%w)", name, ctx.Err(), err)
		}
		return nil, nil, d.fail(ctx, "watch", name, err)
	}
	c := make(chan struct{}, 1)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		d.follow(key, name, w, c, done)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			close(done)
			_ = w.Stop()
			cancelWatch()
			<-finished
		})
	}
	return c, stop, nil
}

// follow reads the watch's entries until done is closed, and signals c
// as NotifyRelease says.
func (d *store) follow(key, name string, w jetstream.KeyWatcher, c chan<- struct{}, done <-chan struct{}) {
	var (
		last    *record // the last record delivered; nil before the first
		initial = true  // before the end of the latest revision's delivery
		timer   fence.Timer
		expiry  <-chan time.Time
	)
	stopTimer := func() {
		if timer != nil {
			timer.Stop()
			timer, expiry = nil, nil
		}
	}
	defer stopTimer()
	updates := w.Updates()
	for {
		select {
		case <-done:
			// The watch's callback may be blocked sending an entry: read
			// until Stop closes the channel.
			go drainEntries(updates)
			return
		case <-expiry:
			timer, expiry = nil, nil
			wake(c)
		case e, ok := <-updates:
			if !ok {
				// The connection closed: the waiter finds out by asking.
				wake(c)
				<-done
				return
			}
			if e == nil {
				initial = false // the end of the entry's latest revision
				continue
			}
			stopTimer()
			if e.Operation() != jetstream.KeyValuePut {
				last = &record{}
				wake(c)
				continue
			}
			r, err := parseRecord(key, e.Value(), e.Revision())
			if err != nil {
				last = &record{}
				wake(c)
				continue
			}
			seen := d.clock.Now()
			if r.held {
				since := d.obs.Note(d.bucket, name, sighting(r), seen)
				timer = d.clock.NewTimer(since.Add(r.ttl).Sub(seen))
				expiry = timer.C()
			}
			same := last != nil && last.held && r.held && last.token == r.token && last.owner == r.owner && last.value == r.value
			// The revision the key had when the watch began is no news
			// while held: the waiter just found it held.
			start := last == nil && initial
			last = &r
			if !same && !(start && r.held) {
				wake(c)
			}
		}
	}
}

// drainEntries reads updates until it is closed.
func drainEntries(updates <-chan jetstream.KeyValueEntry) {
	for range updates {
	}
}

// wake signals c without blocking.
func wake(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
