package fence

// Waiting lines: the callers of Session.Lock in this process that wait for
// the same key of the same Locker (through any of its sessions) stand in
// one line, which the Locker keeps, and only the first
// asks the store. A release by any handle of this process on that key
// kicks the first in line, which asks at once. So waiters of one process
// get the key in arrival order, whatever the store, and a releasing
// worker that locks again goes to the back of the line instead of winning
// the race against the others.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// lines are the waiting lines of one Locker, by key.
type lines struct {
	mu sync.Mutex
	m  map[string][]*waiter
	n  atomic.Int64 // waiters in all lines, read without mu by kick
}

// waiter is one caller of Lock in a line.
type waiter struct {
	in   *lines
	key  string
	turn chan struct{} // closed when the waiter is first in line
	kick chan struct{} // a release of the key, for the first in line
}

// join puts a new waiter at the back of the line for key.
func (ls *lines) join(key string) *waiter {
	w := &waiter{in: ls, key: key, turn: make(chan struct{}), kick: make(chan struct{}, 1)}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil {
		ls.m = make(map[string][]*waiter)
	}
	q := ls.m[key]
	if len(q) == 0 {
		close(w.turn)
	}
	ls.m[key] = append(q, w)
	ls.n.Add(1)
	return w
}

// await waits until w is first in line, ctx is done or giveUp (when not
// zero) has passed on clock.
func (w *waiter) await(ctx context.Context, clock Clock, giveUp time.Time) error {
	select {
	case <-w.turn:
		return nil
	default:
	}
	var expired <-chan time.Time
	if !giveUp.IsZero() {
		t := clock.NewTimer(giveUp.Sub(clock.Now()))
		defer t.Stop()
		expired = t.C()
	}
	select {
	case <-w.turn:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-expired:
		return fmt.Errorf("gave up waiting in line behind other callers of this process: %w", &HeldError{Key: w.key})
	}
}

// leave takes w out of its line; the next waiter, if any, is first now.
func (w *waiter) leave() {
	ls := w.in
	ls.mu.Lock()
	defer ls.mu.Unlock()
	q := ls.m[w.key]
	for i, x := range q {
		if x != w {
			continue
		}
		q = append(q[:i:i], q[i+1:]...)
		ls.n.Add(-1)
		if i == 0 && len(q) > 0 {
			close(q[0].turn)
		}
		break
	}
	if len(q) == 0 {
		delete(ls.m, w.key)
	} else {
		ls.m[w.key] = q
	}
}

// kick tells the first waiter for key, if any, that a handle of this
// process released the key.
func (ls *lines) kick(key string) {
	if ls.n.Load() == 0 {
		return // a waiter that joins after this looks at the store first
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if q := ls.m[key]; len(q) > 0 {
		select {
		case q[0].kick <- struct{}{}:
		default:
		}
	}
}
