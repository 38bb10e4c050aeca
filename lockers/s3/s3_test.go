package s3

import (
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/lockers/lockertest"
)

// harness drives the conformance suite on a bucket of its own. Expiry is
// measured by the Lockers' clock alone (S3 has none a condition can
// read), so a shared fake clock lets Expire move time instead of
// sleeping. The Lockers of one harness share one Observations, as if
// they were one process's Locker. The suite's keys have no slashes, so
// on MinIO the longest is 255 bytes, not S3's 1024 (see minioSegment).
func harness(t *testing.T, trusted bool) lockertest.Harness {
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
			return newSeenLocker(t, client, bucket, opts(), seen).Locker
		},
		TTL:       time.Hour,
		ShortTTL:  MinTTL,
		Expire:    func(*testing.T) { clock.Advance(expire) },
		Pass:      func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		MaxKeyLen: minioSegment,
		BadTTLs:   []time.Duration{0, -time.Second, MinTTL - time.Nanosecond, MaxTTL + time.Nanosecond},
		Now:       clock.Now,
		// A new process: new connections and an empty memory.
		Restart: func(t *testing.T) {
			c := newClient(t, nil)
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
