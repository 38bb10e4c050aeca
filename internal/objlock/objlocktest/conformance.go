package objlocktest

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/lockers/lockertest"
)

// Conformance runs lockertest's suite on the backend of h, clock-free and
// with a trusted clock, each on a bucket of its own. maxKeyLen is the
// longest key the backend's Lockers accept and maxTTL the backend's
// MaxTTL.
//
// Expiry is measured by the Lockers' clock alone (the store has none a
// condition can read), so a shared fake clock lets Expire move time
// instead of sleeping. The Lockers of one harness share one transport and
// one Observations, as if they were one process's Locker: every write a
// Locker makes is remembered at its send time, so once the clock has
// moved ShortTTL every short lease has run out for all of them without
// an Inspect of each key first. Restart gives them new ones.
func Conformance(t *testing.T, h Harness, maxKeyLen int, maxTTL time.Duration) {
	for _, mode := range []struct {
		name    string
		trusted bool
	}{{"ClockFree", false}, {"TrustedClock", true}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			lockertest.Run(t, conformanceHarness(t, h, mode.trusted, maxKeyLen, maxTTL))
		})
	}
}

// conformanceHarness is the lockertest.Harness of Conformance in one
// mode.
func conformanceHarness(outer *testing.T, h Harness, trusted bool, maxKeyLen int, maxTTL time.Duration) lockertest.Harness {
	bucket := h.NewBucket(outer)
	clock := clocktest.New(time.Now())
	const skew = 500 * time.Millisecond
	// transport returns a transport of a new process, closed when the
	// whole run ends.
	transport := func() http.RoundTripper {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		outer.Cleanup(tr.CloseIdleConnections)
		return tr
	}
	var (
		mu   sync.Mutex
		rt   = transport()
		seen = clockfree.NewObservations()
	)
	expire := h.MinTTL + time.Millisecond
	if trusted {
		expire += skew
	}
	return lockertest.Harness{
		New: func(t *testing.T) *fence.Locker {
			mu.Lock()
			defer mu.Unlock()
			o := Options{Clock: clock, TrustedClock: trusted, Backoff: 10 * time.Millisecond, Seen: seen}
			if trusted {
				o.MaxClockSkew = skew
			}
			return h.NewLocker(t, bucket, rt, o).Locker
		},
		TTL:       time.Hour,
		ShortTTL:  h.MinTTL,
		Expire:    func(*testing.T) { clock.Advance(expire) },
		Pass:      func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		MaxKeyLen: maxKeyLen,
		BadTTLs:   []time.Duration{0, -time.Second, h.MinTTL - time.Nanosecond, maxTTL + time.Nanosecond},
		Now:       clock.Now,
		// A new process: new connections and an empty memory.
		Restart: func(*testing.T) {
			tr := transport()
			mu.Lock()
			defer mu.Unlock()
			rt, seen = tr, clockfree.NewObservations()
		},
	}
}
