package memory

import (
	"context"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// BenchmarkAcquireRelease measures one acquire and one release of a free
// key, through the portable layer and on the bare driver side by side, so
// the ratio of the two is the cost of the layer. The owner is fixed, so
// that generating owner ids does not hide it; owner=new adds that.
func BenchmarkAcquireRelease(b *testing.B) {
	ctx := context.Background()
	opts := &fence.AcquireOptions{Owner: "bench"}
	b.Run("portable", func(b *testing.B) {
		l := New(nil)
		b.ReportAllocs()
		for b.Loop() {
			lease, err := l.Acquire(ctx, "k", time.Minute, opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("driver", func(b *testing.B) {
		s := &store{clock: fence.SystemClock{}, keys: make(map[string]*record)}
		b.ReportAllocs()
		for b.Loop() {
			lease, err := s.Acquire(ctx, "k", "bench", time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("handle", func(b *testing.B) {
		s, err := fence.NewSession(New(nil), &fence.SessionOptions{TTL: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		handleCycles(b, s)
	})
	b.Run("handle/held=1", func(b *testing.B) {
		// A session that holds another lease all along: its keepalive
		// runs already, as in a busy process.
		s, err := fence.NewSession(New(nil), &fence.SessionOptions{TTL: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Lock(ctx, "other", nil); err != nil {
			b.Fatal(err)
		}
		defer s.Close(ctx)
		handleCycles(b, s)
	})
	b.Run("portable/owner=new", func(b *testing.B) {
		l := New(nil)
		b.ReportAllocs()
		for b.Loop() {
			lease, err := l.Acquire(ctx, "k", time.Minute, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx, lease); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// handleCycles takes and releases one handle through s per iteration.
func handleCycles(b *testing.B, s *fence.Session) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h, err := s.Lock(ctx, "k", nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
