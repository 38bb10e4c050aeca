package fence

// Waiting lines: the callers of Session.Lock in this process that wait for
// the same key of the same Locker stand in one line, and only the first
// asks the store. A release by any handle of this process on that key
// kicks the first in line, which asks at once. So waiters of one process
// get the key in arrival order, whatever the store, and a releasing
// worker that locks again goes to the back of the line instead of winning
// the race against the others.

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type lineKey struct {
	locker Locker
	key    string
}

var lines struct {
	mu sync.Mutex
	m  map[lineKey][]*waiter
}

// waiter is one caller of Lock in a line.
type waiter struct {
	at   lineKey
	turn chan struct{} // closed when the waiter is first in line
	kick chan struct{} // a release of the key, for the first in line
}

// joinLine puts a new waiter at the back of the line for key on l.
func joinLine(l Locker, key string) *waiter {
	w := &waiter{at: lineKey{l, key}, turn: make(chan struct{}), kick: make(chan struct{}, 1)}
	lines.mu.Lock()
	defer lines.mu.Unlock()
	if lines.m == nil {
		lines.m = make(map[lineKey][]*waiter)
	}
	q := lines.m[w.at]
	if len(q) == 0 {
		close(w.turn)
	}
	lines.m[w.at] = append(q, w)
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
		return fmt.Errorf("gave up waiting in line behind other callers of this process: %w", &HeldError{Key: w.at.key})
	}
}

// leave takes w out of its line; the next waiter, if any, is first now.
func (w *waiter) leave() {
	lines.mu.Lock()
	defer lines.mu.Unlock()
	q := lines.m[w.at]
	for i, x := range q {
		if x != w {
			continue
		}
		q = append(q[:i:i], q[i+1:]...)
		if i == 0 && len(q) > 0 {
			close(q[0].turn)
		}
		break
	}
	if len(q) == 0 {
		delete(lines.m, w.at)
	} else {
		lines.m[w.at] = q
	}
}

// kickLine tells the first waiter for key on l, if any, that a handle of
// this process released the key.
func kickLine(l Locker, key string) {
	if l == nil {
		return
	}
	k := lineKey{l, key}
	lines.mu.Lock()
	defer lines.mu.Unlock()
	if q := lines.m[k]; len(q) > 0 {
		select {
		case q[0].kick <- struct{}{}:
		default:
		}
	}
}
