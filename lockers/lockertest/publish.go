package lockertest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// publishCases test Locker.Publish and LockInfo.Value (driver.Publisher):
// a lease carries a public value that anyone can read with Inspect while
// it lives, set only by its holder, and gone with the lease.
var publishCases = []testCase{
	{"ValueIsReadByAnyone", func(t *testing.T, s *suite) {
		l, other := s.publisher(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		publish(t, l, lease, "10.0.0.7:8080")
		info := s.inspect(t, other, lease.Key)
		if !info.Held || info.Value != "10.0.0.7:8080" || info.Token != lease.Token {
			t.Fatalf("Inspect after Publish = held %v, value %q, token %d; want held, %q, token %d", info.Held, info.Value, info.Token, "10.0.0.7:8080", lease.Token)
		}
		publish(t, l, lease, "10.0.0.8:8080")
		if got := s.inspect(t, other, lease.Key).Value; got != "10.0.0.8:8080" {
			t.Fatalf("Inspect after a second Publish shows value %q; want the new one", got)
		}
	}},
	{"AnyBytesUpToMaxValueLen", func(t *testing.T, s *suite) {
		l := s.publisher(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		odd := "\x00\xff\"'\\\n{}<>&%+=é名 \t" // NUL, a byte that is not UTF-8, quotes, JSON and XML specials
		values := []string{odd, strings.Repeat(odd, fence.MaxValueLen/len(odd)) + strings.Repeat("v", fence.MaxValueLen%len(odd))}
		for _, v := range values {
			publish(t, l, lease, v)
			if got := s.inspect(t, l, lease.Key).Value; got != v {
				t.Fatalf("Publish of %d bytes %q, Inspect gives %d bytes %q", len(v), v, len(got), got)
			}
		}
	}},
	{"TooLongIsInvalidAndChangesNothing", func(t *testing.T, s *suite) {
		l := s.publisher(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		publish(t, l, lease, "kept")
		err := l.Publish(t.Context(), lease, strings.Repeat("x", fence.MaxValueLen+1))
		wantInvalid(t, err, "Publish of MaxValueLen+1 bytes")
		if got := s.inspect(t, l, lease.Key).Value; got != "kept" {
			t.Fatalf("a refused Publish changed the value to %q", got)
		}
	}},
	{"EmptyValueClears", func(t *testing.T, s *suite) {
		l := s.publisher(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		publish(t, l, lease, "x")
		publish(t, l, lease, "")
		if info := s.inspect(t, l, lease.Key); info.Value != "" || !info.Held {
			t.Fatalf("after Publish of \"\": held %v, value %q; want held, no value", info.Held, info.Value)
		}
	}},
	{"KeepsTokenAndLease", func(t *testing.T, s *suite) {
		l, other := s.publisher(t), s.locker(t)
		lease := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		publish(t, l, lease, "v")
		s.wantHeldBy(t, other, lease, nil)
		s.renew(t, l, lease)
		release(t, l, lease)
		s.acquireAfter(t, other, lease.Key, lease.Token, "a Publish and a release")
	}},
	{"NewLeaseStartsWithNone", func(t *testing.T, s *suite) {
		l, other := s.publisher(t), s.locker(t)
		released := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		publish(t, l, released, "old")
		release(t, l, released)
		if got := s.inspect(t, other, released.Key).Value; got != "" {
			t.Errorf("a released key shows value %q", got)
		}
		next := s.acquireAfter(t, other, released.Key, released.Token, "a release")
		if got := s.inspect(t, l, next.Key).Value; got != "" {
			t.Errorf("a lease taken after a release shows the last holder's value %q", got)
		}
		broken := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		publish(t, l, broken, "old")
		breakKey(t, other, broken.Key)
		next = s.acquireAfter(t, other, broken.Key, broken.Token, "a break")
		if got := s.inspect(t, l, next.Key).Value; got != "" {
			t.Errorf("a lease taken after a break shows the broken holder's value %q", got)
		}
		// Another case's Expire may end a short lease before it publishes:
		// take another then.
		var expired fence.Lease
		for try := 1; ; try++ {
			expired = s.acquire(t, l, s.key(t), s.h.ShortTTL, nil)
			err := l.Publish(t.Context(), expired, "old")
			if err == nil {
				break
			}
			if !errors.Is(err, fence.ErrNotHeld) || try == 5 {
				t.Fatalf("Publish(%q) on a lease of ShortTTL: %v", expired.Key, err)
			}
		}
		s.h.Expire(t)
		next = s.acquireAfter(t, other, expired.Key, expired.Token, "an expiry")
		if got := s.inspect(t, l, next.Key).Value; got != "" {
			t.Errorf("a lease taken after an expiry shows the expired holder's value %q", got)
		}
	}},
	{"StaleHolderIsRefusedAndChangesNothing", func(t *testing.T, s *suite) {
		l, other := s.publisher(t), s.locker(t)
		stale := s.acquire(t, l, s.key(t), s.h.ShortTTL, nil)
		s.h.Expire(t)
		next := s.acquireAfter(t, other, stale.Key, stale.Token, "an expiry")
		publish(t, other, next, "new")
		wantErr(t, l.Publish(t.Context(), stale, "stale"), fence.ErrNotHeld, "Publish by a holder whose lease was taken over")
		// The same, asked of the driver: the store refuses it too, not
		// only the local book.
		pub := driverPublisher(t, l)
		stale.TTL = s.h.TTL
		if err := pub.Publish(t.Context(), stale, "stale"); !errors.Is(err, fence.ErrNotHeld) {
			t.Errorf("driver Publish by a stale holder: %v; want an error matching fence.ErrNotHeld", err)
		}
		if got := s.inspect(t, other, next.Key); got.Value != "new" || got.Token != next.Token {
			t.Fatalf("after a stale Publish: value %q token %d; want %q, token %d", got.Value, got.Token, "new", next.Token)
		}
		released := s.acquire(t, l, s.key(t), s.h.TTL, nil)
		release(t, l, released)
		if err := pub.Publish(t.Context(), released, "late"); !errors.Is(err, fence.ErrNotHeld) {
			t.Errorf("driver Publish of a released lease: %v; want an error matching fence.ErrNotHeld", err)
		}
		if got := s.inspect(t, l, released.Key); got.Held || got.Value != "" {
			t.Errorf("a Publish after release shows held %v, value %q", got.Held, got.Value)
		}
	}},
	{"WakesWaiters", func(t *testing.T, s *suite) {
		// A Publish wakes the key's waiters of every Locker: those of
		// the Locker that publishes, and those of another (another
		// process), also right after the lease was taken and when the
		// key was free when they subscribed.
		l, other := s.publisher(t), s.locker(t)
		type waiter struct {
			name string
			c    <-chan struct{}
		}
		var waiters []waiter
		for _, c := range []struct {
			name    string
			watcher *fence.Locker
			free    bool // subscribe before the lease is taken
		}{
			{"a waiter of the publishing Locker", l, false},
			{"a waiter of another Locker", other, false},
			{"a waiter of another Locker that subscribed while the key was free", other, true},
		} {
			n := notifier(t, c.watcher)
			key := s.key(t)
			var lease fence.Lease
			if !c.free {
				lease = s.acquire(t, l, key, s.h.TTL, nil)
			}
			ch, stop, err := n.NotifyRelease(t.Context(), key)
			if errors.Is(err, errors.ErrUnsupported) {
				t.Skipf("this Locker cannot notify (its waiters poll): %v", err)
			}
			if err != nil {
				t.Fatalf("%s: NotifyRelease: %v", c.name, err)
			}
			t.Cleanup(stop)
			if c.free {
				lease = s.acquire(t, l, key, s.h.TTL, nil)
			}
			drain(ch)
			publish(t, l, lease, "hello")
			waiters = append(waiters, waiter{c.name, ch})
		}
		woken := make([]bool, len(waiters))
		// wait waits up to d for every waiter not woken yet, and
		// returns the name of one still not woken, or "".
		wait := func(d time.Duration) string {
			timer := time.NewTimer(d)
			defer timer.Stop()
			for i, w := range waiters {
				if woken[i] {
					continue
				}
				select {
				case <-w.c:
					woken[i] = true
				case <-timer.C:
					return w.name
				}
			}
			return ""
		}
		if wait(time.Second) == "" {
			return
		}
		// A notifier that reads the store on a timer of the harness's
		// fake clock reads only as that clock moves.
		s.h.Expire(t)
		if name := wait(patience); name != "" {
			t.Fatalf("%s: no notification %v after a Publish", name, patience)
		}
	}},
}

// patience is how long a case waits for something that should come at
// once (a notification), before it fails.
const patience = 30 * time.Second

func drain(c <-chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// notifier returns the driver under l as a driver.ReleaseNotifier, and
// skips the test when it is none.
func notifier(t *testing.T, l *fence.Locker) driver.ReleaseNotifier {
	t.Helper()
	var n driver.ReleaseNotifier
	if _, err := driver.Wrap(l, func(d driver.Locker) driver.Locker {
		n, _ = d.(driver.ReleaseNotifier)
		return d
	}); err != nil {
		t.Fatal(err)
	}
	if n == nil {
		t.Skip("the driver notifies nothing (no driver.ReleaseNotifier)")
	}
	return n
}

// publish sets lease's value with l.
func publish(t *testing.T, l *fence.Locker, lease fence.Lease, value string) {
	t.Helper()
	if err := l.Publish(t.Context(), lease, value); err != nil {
		t.Fatalf("Publish(%q, %d bytes): %v", lease.Key, len(value), err)
	}
}

// publisher returns a Locker from the harness, and skips the test when
// its driver keeps no values.
func (s *suite) publisher(t *testing.T) *fence.Locker {
	t.Helper()
	l := s.locker(t)
	driverPublisher(t, l)
	return l
}

// driverPublisher returns the driver under l as a driver.Publisher, and
// skips the test when it is none.
func driverPublisher(t *testing.T, l *fence.Locker) driver.Publisher {
	t.Helper()
	p, _ := driver.LockerOf(l).(driver.Publisher)
	if p == nil {
		t.Skip("the driver keeps no public values (no driver.Publisher)")
	}
	return p
}
