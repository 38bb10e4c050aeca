package objlocktest

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
	"github.com/fencekit/fence/internal/probe"
)

// Harness is what a backend's tests give the shared tests: fresh buckets
// on its emulator, Lockers on them, and raw access to their objects.
type Harness struct {
	// MinTTL is the backend's MinTTL.
	MinTTL time.Duration
	// Version names a version of an object in messages ("generation",
	// "ETag").
	Version string
	// NewBucket returns the name of a new, empty bucket, removed when
	// the test ends.
	NewBucket func(t *testing.T) string
	// NewLocker returns a Locker on bucket, as New makes it, whose
	// requests go through rt (nil: directly), with o set on the
	// backend's options.
	NewLocker func(t *testing.T, bucket string, rt http.RoundTripper, o Options) *Locker
	// WriteRaw writes data as object name of bucket, unconditionally, as
	// an operator (or a bug) would, and returns its version.
	WriteRaw func(t *testing.T, bucket, name string, data []byte) string
	// VersionOf returns the version of object name of bucket, "" if
	// absent.
	VersionOf func(t *testing.T, bucket, name string) string
	// IsWrite reports whether req writes an object.
	IsWrite func(req *http.Request) bool
	// ErrorResponse returns the store's answer to req refusing it with
	// status, error code and message.
	ErrorResponse func(req *http.Request, status int, code, msg string) *http.Response
	// StatusOf returns the HTTP status of the store's answer in err, 0
	// when err holds none.
	StatusOf func(err error) int
	// FirstReads is how many requests other than writes a Locker's first
	// Acquire of a key in a new bucket makes: 1, or 2 where the first
	// read of a missing object must also ask whether the bucket exists.
	FirstReads int64
	// Creates says the Lockers of NewLocker have a Create.
	Creates bool
}

// Options are the backend's options that the shared tests set.
type Options struct {
	Prefix        string
	Clock         fence.Clock
	TrustedClock  bool
	MaxClockSkew  time.Duration
	MaxAttempts   int
	Backoff       time.Duration
	ProbeInterval time.Duration
	// Seen, when set, is what the store remembers of the objects it saw,
	// shared by the Lockers of one process (nil: a store's own).
	Seen *clockfree.Observations
}

// Notifier is the store under a Locker, as the probe tests see it.
type Notifier interface {
	driver.ReleaseNotifier
	Prober() *probe.Prober
}

// Locker is a Locker with what the shared tests look at under it.
type Locker struct {
	*fence.Locker
	// Store is the driver under the Locker.
	Store Notifier
	// Object returns the name of the object that holds key's record.
	Object func(key string) string
}

// Run runs every shared test against the backend of h.
func Run(t *testing.T, h Harness) {
	runAll(t, h, []test{
		{"Expiry", RunExpiry},
		{"Corrupt", RunCorrupt},
		{"Faults", RunFaults},
		{"Notify", RunNotify},
		{"Requests", RunRequests},
	})
}

// test is one named test of a group.
type test struct {
	name string
	run  func(*testing.T, Harness)
}

// runAll runs tests as parallel subtests of t.
func runAll(t *testing.T, h Harness, tests []test) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, h)
		})
	}
}

// fakeOptions returns options with clock and fast retries.
func fakeOptions(clock fence.Clock) Options {
	return Options{Clock: clock, Backoff: time.Millisecond}
}

// Counter counts the requests that pass through it to Next: the writes
// of objects (Harness.IsWrite) and the others.
type Counter struct {
	Next          http.RoundTripper
	IsWrite       func(*http.Request) bool
	Writes, Other atomic.Int64
}

func (c *Counter) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.IsWrite(req) {
		c.Writes.Add(1)
	} else {
		c.Other.Add(1)
	}
	return c.Next.RoundTrip(req)
}

// Total returns the number of requests counted.
func (c *Counter) Total() int64 { return c.Writes.Load() + c.Other.Load() }

// Caller is what Acquire and Inspect call: a *fence.Locker, a *Locker or
// a backend's own wrapper of one.
type Caller interface {
	Acquire(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions) (fence.Lease, error)
	Inspect(ctx context.Context, key string) (fence.LockInfo, error)
}

// Acquire takes key with l and fails the test on error.
func Acquire(t *testing.T, l Caller, key string, ttl time.Duration) fence.Lease {
	t.Helper()
	lease, err := l.Acquire(t.Context(), key, ttl, nil)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", key, err)
	}
	return lease
}

// Inspect describes key with l and fails the test on error.
func Inspect(t *testing.T, l Caller, key string) fence.LockInfo {
	t.Helper()
	info, err := l.Inspect(t.Context(), key)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", key, err)
	}
	return info
}
