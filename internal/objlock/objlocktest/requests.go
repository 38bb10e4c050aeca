package objlocktest

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/clockfree"
)

// RunRequests runs the tests of the requests each call makes, counted
// on the wire.
func RunRequests(t *testing.T, h Harness) {
	runAll(t, h, []test{
		{"PerCall", RequestsPerCall},
		{"NotHeldAfterBreak", NotHeldAfterBreak},
	})
}

// RequestsPerCall: a Locker writes under the version it remembers, so a
// key it used before costs one request per Acquire, Renew and Release; a
// read comes only where it knows nothing (the first read of a new bucket
// may add h.FirstReads-1 requests), where its memory says the key is held
// and it must look again, or after a write lost a race.
func RequestsPerCall(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	clock := clocktest.New(time.Now())
	c := &Counter{Next: http.DefaultTransport, IsWrite: h.IsWrite}
	seen := clockfree.NewObservations()
	opts := Options{Clock: clock, Seen: seen}
	l := h.NewLocker(t, bucket, c, opts)
	sibling := h.NewLocker(t, bucket, c, opts) // same process
	opts.Seen = nil
	stranger := h.NewLocker(t, bucket, c, opts) // another process

	var lease fence.Lease
	ttl := h.MinTTL
	steps := []struct {
		name          string
		call          func() error
		reads, writes int64
	}{
		{"Acquire of a new key, the Locker's first", func() (err error) { lease, err = l.Acquire(t.Context(), "k", ttl, nil); return err }, h.FirstReads, 1},
		{"Acquire of another new key", func() error { _, err := l.Acquire(t.Context(), "k2", ttl, nil); return err }, 1, 1},
		{"Renew", func() (err error) { lease, err = l.Renew(t.Context(), lease); return err }, 0, 1},
		{"Publish", func() error { return l.Publish(t.Context(), lease, "10.0.0.7:8080") }, 0, 1},
		{"Renew after a Publish", func() (err error) { lease, err = l.Renew(t.Context(), lease); return err }, 0, 1},
		{"Acquire of a held key, remembered held", func() error { return heldErr(sibling.Acquire(t.Context(), "k", ttl, nil)) }, 1, 0},
		{"Acquire of a held key, never seen", func() error { return heldErr(stranger.Acquire(t.Context(), "k", ttl, nil)) }, 1, 0},
		{"Release", func() error { return l.Release(t.Context(), lease) }, 0, 1},
		{"Acquire of a key remembered free", func() (err error) { lease, err = sibling.Acquire(t.Context(), "k", ttl, nil); return err }, 0, 1},
		{"Release by the sibling", func() error { return sibling.Release(t.Context(), lease) }, 0, 1},
		{"Acquire of a key remembered held, but freed since", func() (err error) { lease, err = stranger.Acquire(t.Context(), "k", ttl, nil); return err }, 1, 1},
		{"Acquire of a key remembered free, but taken since (a failed try)", func() error { return heldErr(l.Acquire(t.Context(), "k", ttl, nil)) }, 1, 1},
		{"Inspect", func() error { _, err := l.Inspect(t.Context(), "k"); return err }, 1, 0},
		{"Break", func() error { return l.Break(t.Context(), "k") }, 1, 1},
		{"Break of a free key", func() error { return l.Break(t.Context(), "k") }, 1, 0},
	}
	for _, s := range steps {
		r0, w0 := c.Other.Load(), c.Writes.Load()
		if err := s.call(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if r, w := c.Other.Load()-r0, c.Writes.Load()-w0; r != s.reads || w != s.writes {
			t.Errorf("%s made %d reads and %d writes; want %d and %d", s.name, r, w, s.reads, s.writes)
		}
	}
}

// heldErr turns the HeldError an Acquire must return into nil.
func heldErr(_ fence.Lease, err error) error {
	if errors.Is(err, fence.ErrHeld) {
		return nil
	}
	if err == nil {
		return errors.New("acquired a key that should be held")
	}
	return err
}

// NotHeldAfterBreak: a lease whose record was freed or taken over since
// is not held: Renew and Release say so with a *fence.NotHeldError naming
// the key. Renew, remembering the lease's record, writes once under its
// version and is refused; what it reads then tells Release without a
// write.
func NotHeldAfterBreak(t *testing.T, h Harness) {
	bucket := h.NewBucket(t)
	c := &Counter{Next: http.DefaultTransport, IsWrite: h.IsWrite}
	l := h.NewLocker(t, bucket, c, Options{})
	lease := Acquire(t, l, "k", h.MinTTL)
	if err := h.NewLocker(t, bucket, nil, Options{}).Break(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	_, renewErr := l.Renew(t.Context(), lease)
	for call, err := range map[string]error{"Renew": renewErr, "Release": l.Release(t.Context(), lease)} {
		nh, ok := errors.AsType[*fence.NotHeldError](err)
		if !ok || nh.Key != "k" || !errors.Is(err, fence.ErrNotHeld) {
			t.Errorf("%s after Break = %v; want a *fence.NotHeldError for key k", call, err)
		}
	}
	if w := c.Writes.Load(); w != 2 {
		t.Errorf("%d writes; want 2: the Acquire's and the Renew's refused one", w)
	}
}
