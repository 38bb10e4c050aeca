package gcs

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/lockers/lockertest"
)

// harness drives the conformance suite on a bucket of its own. Expiry is
// measured by the Lockers' clock alone (the store has none), so a shared
// fake clock lets Expire move time instead of sleeping. The Lockers of one
// harness share one Observations, as if they were one process's Locker:
// every write a Locker makes is remembered at its send time, so once the
// clock has moved ShortTTL every short lease has run out for all of them
// without an Inspect of each key first.
func harness(t *testing.T, trusted bool) lockertest.Harness {
	outer := t
	bucket := newBucket(t)
	clock := clocktest.New(time.Now())
	const skew = 500 * time.Millisecond
	var (
		mu     sync.Mutex
		client = newClient(t, nil)
		seen   = clockfree.NewObservations()
	)
	opts := func() *Options {
		o := &Options{Clock: clock, TrustedClock: trusted, Backoff: 10 * time.Millisecond}
		if trusted {
			o.MaxClockSkew = skew
		}
		return o
	}
	expire := MinTTL + time.Millisecond
	if trusted {
		expire += skew
	}
	return lockertest.Harness{
		New: func(t *testing.T) *fence.Locker {
			mu.Lock()
			defer mu.Unlock()
			return newSeenLocker(t, client.Bucket(bucket), opts(), seen).Locker
		},
		TTL:       time.Hour,
		ShortTTL:  MinTTL,
		Expire:    func(*testing.T) { clock.Advance(expire) },
		Pass:      func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		MaxKeyLen: MaxObjectNameLen,
		BadTTLs:   []time.Duration{0, -time.Second, MinTTL - time.Nanosecond, MaxTTL + time.Nanosecond},
		Now:       clock.Now,
		// A new process: new connections and an empty memory.
		Restart: func(*testing.T) {
			c := newClient(outer, nil) // closed when the whole run ends
			mu.Lock()
			defer mu.Unlock()
			client, seen = c, clockfree.NewObservations()
		},
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name    string
		trusted bool
	}{{"ClockFree", false}, {"TrustedClock", true}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			lockertest.Run(t, harness(t, mode.trusted))
		})
	}
}

// A Session on Cloud Storage renews one object at most once a second.
func TestSessionRenewsAtMostOncePerSecond(t *testing.T) {
	l := newLocker(t, newBucket(t), nil, nil)
	if got := driver.InfoOf(l.Locker).MinRenewInterval; got != MinRenewInterval {
		t.Fatalf("MinRenewInterval %v; want %v", got, MinRenewInterval)
	}
	if _, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: 10 * time.Second, RenewInterval: 500 * time.Millisecond}); !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("RenewInterval 500ms: %v; want ErrInvalid", err)
	}
	s, err := fence.NewSession(l.Locker, &fence.SessionOptions{TTL: MinTTL})
	if err != nil {
		t.Fatalf("TTL MinTTL, default RenewInterval: %v", err)
	}
	s.Close(t.Context())
}
