package s3

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TestProbeIntervalTooShort: a probe interval under probe.MinInterval is
// refused before anything is sent.
func TestProbeIntervalTooShort(t *testing.T) {
	t.Parallel()
	_, err := New(newClient(t, nil), "locks", &Options{ProbeInterval: time.Millisecond})
	if !errors.Is(err, fence.ErrInvalid) {
		t.Errorf("New with ProbeInterval 1ms: %v; want an error matching fence.ErrInvalid", err)
	}
}

// TestProbeIsAConditionalHead: while a key stays held, each probe is one
// HEAD request that MinIO answers 304 Not Modified, and no GET.
func TestProbeIsAConditionalHead(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	holder := newLocker(t, bucket, nil, nil)
	lease := acquire(t, holder, "k", time.Minute)
	c := &counter{next: http.DefaultTransport}
	var notModified atomic.Int64
	waiter := newLocker(t, bucket, roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := c.RoundTrip(req)
		if err == nil && req.Method == http.MethodHead && resp.StatusCode == http.StatusNotModified {
			notModified.Add(1)
		}
		return resp, err
	}), &Options{ProbeInterval: 10 * time.Millisecond})
	ch, stop, err := waiter.d.NotifyRelease(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if g := c.gets.Load(); g != 1 {
		t.Fatalf("NotifyRelease made %d GETs; want 1, its first reading", g)
	}
	for deadline := time.Now().Add(time.Minute); notModified.Load() < 5; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d HEADs answered 304 in a minute of probing every 10ms; want 5", notModified.Load())
		}
	}
	if g, h := c.gets.Load(), c.others.Load(); g != 1 || h < 5 {
		t.Fatalf("while the key stayed held: %d GETs and %d HEADs; want 1 and at least 5", g, h)
	}
	if err := holder.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatal("no notification a minute after the release")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
