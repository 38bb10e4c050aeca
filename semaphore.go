package fence

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"strconv"
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
// the measured fairness). Every process must use the same permits for a
// name: a process that uses fewer reaches fewer slots.
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
			h, err := s.acquire(ctx, SlotKey(name, i), false, 0)
			if err == nil {
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
