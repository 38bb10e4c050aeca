package fence

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/fencekit/fence/internal/backoff"
)

// MaxPermits is the largest number of permits of a semaphore
// (Session.LockSemaphore).
const MaxPermits = 256

// SlotKey returns the key of slot i of the semaphore name: name, "#" and
// i in decimal ("crawler#3"). A semaphore's permits are these keys, each
// a lock with its own tokens.
func SlotKey(name string, i int) string { return name + "#" + strconv.Itoa(i) }

// LockSemaphore takes one of permits slots of the semaphore name, so
// that at most permits handles hold the semaphore at once, across every
// process that uses the same name and permits on the same store. The
// handle's Key is the slot's key (SlotKey) and its Token that slot's
// token: a resource fenced per slot (Bind with the handle) refuses a
// holder whose lease ran out once its slot was taken again, as it would
// for any lock. A semaphore is nothing but permits keys, so every
// Locker offers it.
//
// It tries the slots once each, starting at a random one, and waits as
// opts says when all are busy (Lock's rules): it wakes when any slot is
// released where the store notifies (every backend of this module does),
// when a holder's lease ends where the store says when, or every
// SessionOptions.PollInterval, and then tries the slot that came free
// first. Waiters of several processes race for a freed slot; none holds a
// place in a queue, so none can block the others, and the random start
// and the wake-ups spread the permits evenly (the guarantees doc gives
// the measured fairness). A waiting call does not take back, for a
// moment (PollInterval, at most 100 ms), a slot that its own session
// released: a process that releases a permit and asks again at once
// leaves it to the waiters of other processes first, which learn of the
// release later than it could ask again (at once on the same store, or by
// a 50–100 ms poll or probe); with no waiter, it takes it after that
// moment, or another free slot at once. Every process must use the same
// permits for a name: a process that uses fewer reaches fewer slots.
//
// permits must be in [1, MaxPermits], and every slot key valid for the
// Locker (ErrInvalid). Closing the session ends a waiting LockSemaphore
// with an error matching ErrSessionClosed.
func (s *Session) LockSemaphore(ctx context.Context, name string, permits int, opts *LockOptions) (*Handle, error) {
	var wait time.Duration
	if opts != nil {
		wait = opts.Wait
	}
	switch {
	case wait < 0:
		return nil, sessionInvalid("Wait", "%v is negative (WaitForever waits until ctx ends)", wait)
	case permits < 1 || permits > MaxPermits:
		return nil, sessionInvalid("permits", "%d is outside [1, %d]", permits, MaxPermits)
	case name == "":
		return nil, sessionInvalid("name", "empty")
	}
	if err := s.locker.checkKey(SlotKey(name, permits-1)); err != nil {
		return nil, s.locker.fail(ctx, "acquire", SlotKey(name, permits-1), err)
	}
	clock := s.s.clock
	var giveUp time.Time
	if wait > 0 && wait != WaitForever {
		giveUp = clock.Now().Add(wait)
	}
	if wait > 0 {
		var stopClosed func()
		ctx, stopClosed = s.untilClosed(ctx)
		defer stopClosed()
	}
	var (
		wake    chan int // the slot a notification named
		stop    func()
		lastErr error
	)
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	first := -1 // a slot to try before the others
	grace := min(s.s.poll, maxSlotGrace)
	for round := 1; ; round++ {
		var until time.Time // the soonest end of a busy slot's lease
		failed := false
		start := mathrand.IntN(permits)
		for j := -1; j < permits; j++ {
			i := (start + j) % permits
			if j < 0 {
				if first < 0 {
					continue
				}
				i = first
			} else if i == first {
				continue
			}
			key := SlotKey(name, i)
			if wait > 0 {
				if end, ok := s.slots.leftTo(key, clock.Now(), grace); ok {
					if until.IsZero() || end.Before(until) {
						until = end // try it again once its moment is over
					}
					continue
				}
			}
			h, err := s.acquire(ctx, key, false, 0)
			if err == nil {
				h.slot = true
				return h, nil
			}
			lastErr = err
			held, isHeld := errors.AsType[*HeldError](err)
			switch {
			case errors.Is(err, ErrInvalid) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrSessionClosed):
				return nil, err
			case isHeld:
				if !held.ValidUntil.IsZero() && (until.IsZero() || held.ValidUntil.Before(until)) {
					until = held.ValidUntil
				}
			case errors.Is(err, ErrHeld):
			default:
				failed = true
			}
			if ctx.Err() != nil {
				return nil, s.acquireStopped(ctx, name, nil, lastErr)
			}
			if first >= 0 && j < 0 && wake != nil {
				break // woken for this slot, which went to another: wait again
			}
		}
		first = -1
		if wait == 0 {
			return nil, fmt.Errorf("fence: semaphore %q: all %d permits are taken: %w", name, permits, lastErr)
		}
		if wake == nil && s.locker.notify != nil {
			wake, stop = s.watchSlots(ctx, name, permits)
			continue // watching now: try again before sleeping
		}
		now := clock.Now()
		sleep := backoff.Jitter(s.s.poll)
		if failed {
			sleep = backoff.Policy{First: s.s.backoffMin, Max: s.s.backoffMax}.Delay(round)
		}
		if !until.IsZero() && until.Sub(now) < sleep {
			sleep = max(until.Sub(now), 0) + time.Millisecond
		}
		if !giveUp.IsZero() {
			remaining := giveUp.Sub(now)
			if remaining <= 0 {
				return nil, fmt.Errorf("fence: semaphore %q: gave up after %v: %w", name, wait, lastErr)
			}
			sleep = min(sleep, remaining)
		}
		t := clock.NewTimer(sleep)
		select {
		case <-t.C():
		case i := <-wake:
			t.Stop()
			first = i
		case <-ctx.Done():
			t.Stop()
			return nil, s.acquireStopped(ctx, name, nil, lastErr)
		}
	}
}

// maxSlotGrace bounds how long a waiting LockSemaphore leaves a slot its
// session released to the waiters of other processes.
const maxSlotGrace = 100 * time.Millisecond

// slotReleases are the times a session released its semaphore slots, by
// key, for the grace of LockSemaphore.
type slotReleases struct {
	mu sync.Mutex
	at map[string]time.Time
}

// released records that the session released slot key at now.
func (r *slotReleases) released(key string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at = make(map[string]time.Time)
	}
	for k, t := range r.at { // forget what is long over
		if now.Sub(t) > maxSlotGrace {
			delete(r.at, k)
		}
	}
	r.at[key] = now
}

// leftTo reports whether slot key was released by the session less than
// grace before now, and when that grace ends.
func (r *slotReleases) leftTo(key string, now time.Time, grace time.Duration) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.at[key]
	if !ok || now.Sub(t) >= grace {
		return time.Time{}, false
	}
	return t.Add(grace), true
}

// watchSlots subscribes to the release notifications of every slot of
// name, and returns a channel of the slots notified (a buffer of one: a
// notification that finds it full is dropped, as the waiter will look at
// every slot at its next poll anyway) and the function that stops it
// all. A slot whose subscription fails is left to the polls.
func (s *Session) watchSlots(ctx context.Context, name string, permits int) (chan int, func()) {
	out := make(chan int, 1)
	quit := make(chan struct{})
	var stops []func()
	for i := range permits {
		c, stop, err := s.locker.notifyRelease(ctx, SlotKey(name, i))
		if err != nil {
			continue
		}
		stops = append(stops, stop)
		go func() {
			for {
				select {
				case <-c:
					select {
					case out <- i:
					default:
					}
				case <-quit:
					return
				}
			}
		}()
	}
	return out, func() {
		close(quit)
		for _, stop := range stops {
			stop()
		}
	}
}
