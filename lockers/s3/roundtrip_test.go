package s3

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/clockfree"
)

// The requests each call makes, counted on the wire (a read is a GET, a
// write a conditional PUT). A Locker writes under the ETag it remembers,
// so a key it used before costs one request per Acquire, Renew and
// Release; a read comes only where it knows nothing, where its memory
// says the key is held and it must look again, or after a write lost a
// race. S3 tells a missing key (NoSuchKey) from a missing bucket
// (NoSuchBucket), so no request asks for the bucket.
func TestRequestsPerCall(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	clock := clocktest.New(time.Now())
	c := &counter{next: http.DefaultTransport}
	seen := clockfree.NewObservations()
	l := newSeenLocker(t, newClient(t, c), bucket, &Options{Clock: clock}, seen)
	sibling := newSeenLocker(t, newClient(t, c), bucket, &Options{Clock: clock}, seen) // same process
	stranger := newLocker(t, bucket, c, &Options{Clock: clock})                        // another process

	var lease fence.Lease
	steps := []struct {
		name          string
		call          func() error
		reads, writes int64
	}{
		{"Acquire of a new key", func() (err error) { lease, err = l.Acquire(t.Context(), "k", MinTTL, nil); return err }, 1, 1},
		{"Acquire of another new key", func() error { _, err := l.Acquire(t.Context(), "k2", MinTTL, nil); return err }, 1, 1},
		{"Renew", func() (err error) { lease, err = l.Renew(t.Context(), lease); return err }, 0, 1},
		{"Acquire of a held key, remembered held", func() error { return heldErr(sibling.Acquire(t.Context(), "k", MinTTL, nil)) }, 1, 0},
		{"Acquire of a held key, never seen", func() error { return heldErr(stranger.Acquire(t.Context(), "k", MinTTL, nil)) }, 1, 0},
		{"Release", func() error { return l.Release(t.Context(), lease) }, 0, 1},
		{"Acquire of a key remembered free", func() (err error) { lease, err = sibling.Acquire(t.Context(), "k", MinTTL, nil); return err }, 0, 1},
		{"Release by the sibling", func() error { return sibling.Release(t.Context(), lease) }, 0, 1},
		{"Acquire of a key remembered held, but freed since", func() (err error) { lease, err = stranger.Acquire(t.Context(), "k", MinTTL, nil); return err }, 1, 1},
		{"Acquire of a key remembered free, but taken since (a failed try)", func() error { return heldErr(l.Acquire(t.Context(), "k", MinTTL, nil)) }, 1, 1},
		{"Inspect", func() error { _, err := l.Inspect(t.Context(), "k"); return err }, 1, 0},
		{"Break", func() error { return l.Break(t.Context(), "k") }, 1, 1},
		{"Break of a free key", func() error { return l.Break(t.Context(), "k") }, 1, 0},
	}
	for _, s := range steps {
		r0, w0, o0 := c.gets.Load(), c.puts.Load(), c.others.Load()
		if err := s.call(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		r, w, o := c.gets.Load()-r0, c.puts.Load()-w0, c.others.Load()-o0
		if r != s.reads || w != s.writes || o != 0 {
			t.Errorf("%s made %d reads, %d writes and %d other requests; want %d, %d and 0", s.name, r, w, o, s.reads, s.writes)
		}
		t.Logf("%s: %d GET, %d PUT", s.name, r, w)
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

// A lease whose record was freed or taken over since is not held: Renew
// and Release say so with a *fence.NotHeldError naming the key. Renew,
// remembering the lease's record, writes once under its ETag and is
// refused; what it reads then tells Release without a write.
func TestRenewAndReleaseAfterBreakAreNotHeld(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	c := &counter{next: http.DefaultTransport}
	l := newLocker(t, bucket, c, nil)
	lease := acquire(t, l, "k", MinTTL)
	if err := newLocker(t, bucket, nil, nil).Break(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	_, renewErr := l.Renew(t.Context(), lease)
	for call, err := range map[string]error{"Renew": renewErr, "Release": l.Release(t.Context(), lease)} {
		nh, ok := errors.AsType[*fence.NotHeldError](err)
		if !ok || nh.Key != "k" || !errors.Is(err, fence.ErrNotHeld) {
			t.Errorf("%s after Break = %v; want a *fence.NotHeldError for key k", call, err)
		}
	}
	if w := c.puts.Load(); w != 2 {
		t.Errorf("%d PUTs; want 2: the Acquire's and the Renew's refused one", w)
	}
}
