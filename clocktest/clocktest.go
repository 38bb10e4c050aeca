// Package clocktest provides a fake fence.Clock that moves only when a test
// says so, so that tests of leases never sleep for a TTL.
package clocktest

import (
	"context"
	"sync"
	"time"

	"github.com/fencekit/fence"
)

// Fake is a manually advanced fence.Clock. It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*timer
	changed chan struct{} // closed and replaced whenever a timer is added
}

var _ fence.Clock = (*Fake)(nil)

// New returns a Fake clock set to start.
func New(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the clock has been advanced by d.
// A timer with d <= 0 fires at once.
func (f *Fake) NewTimer(d time.Duration) fence.Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &timer{f: f, at: f.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- f.now
		return t
	}
	f.timers = append(f.timers, t)
	close(f.changed)
	f.changed = make(chan struct{})
	return t
}

// Advance moves the clock forward by d and fires every timer that is due,
// in deadline order.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	kept := f.timers[:0]
	var due []*timer
	for _, t := range f.timers {
		if !t.at.After(f.now) {
			due = append(due, t)
		} else {
			kept = append(kept, t)
		}
	}
	f.timers = kept
	for len(due) > 0 {
		first := 0
		for i, t := range due {
			if t.at.Before(due[first].at) {
				first = i
			}
		}
		select {
		case due[first].c <- f.now:
		default:
		}
		due = append(due[:first], due[first+1:]...)
	}
}

// Timers returns how many timers are waiting to fire.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// WaitTimers blocks until at least n timers are waiting, or ctx is done.
// Tests call it to know that a goroutine has armed its timer before they
// advance the clock.
func (f *Fake) WaitTimers(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		if len(f.timers) >= n {
			f.mu.Unlock()
			return nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type timer struct {
	f  *Fake
	at time.Time
	c  chan time.Time
}

func (t *timer) C() <-chan time.Time { return t.c }

func (t *timer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	for i, x := range t.f.timers {
		if x == t {
			t.f.timers = append(t.f.timers[:i], t.f.timers[i+1:]...)
			return true
		}
	}
	return false
}
