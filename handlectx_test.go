package fence_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/memory"
)

// A handle's context is cancelled by the handle's end, its parent or its
// cancel, with the first of them as its cause, whether or not Done was
// asked for before.
func TestHandleContextCause(t *testing.T) {
	t.Parallel()
	s := newSession(t, memory.New(nil), nil)
	lock := func(t *testing.T) *fence.Handle {
		h, err := s.Lock(t.Context(), t.Name(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	check := func(t *testing.T, ctx context.Context, wantErr, wantCause error) {
		t.Helper()
		if err := ctx.Err(); !errors.Is(err, wantErr) {
			t.Errorf("Err = %v; want %v", err, wantErr)
		}
		select {
		case <-ctx.Done():
		default:
			t.Error("Done not closed")
		}
		if err := context.Cause(ctx); !errors.Is(err, wantCause) {
			t.Errorf("Cause = %v; want %v", err, wantCause)
		}
	}
	for _, askFirst := range []bool{false, true} {
		name := "asked after"
		if askFirst {
			name = "asked before"
		}
		t.Run(name+"/handle ends", func(t *testing.T) {
			h := lock(t)
			ctx, cancel := h.Context(t.Context())
			defer cancel()
			if askFirst {
				_ = ctx.Done()
			}
			if err := ctx.Err(); err != nil {
				t.Fatalf("Err while held = %v", err)
			}
			if err := h.Release(t.Context()); err != nil {
				t.Fatal(err)
			}
			check(t, ctx, context.Canceled, fence.ErrReleased)
		})
		t.Run(name+"/cancel first", func(t *testing.T) {
			h := lock(t)
			ctx, cancel := h.Context(t.Context())
			if askFirst {
				_ = ctx.Done()
			}
			cancel()
			if err := h.Release(t.Context()); err != nil {
				t.Fatal(err)
			}
			check(t, ctx, context.Canceled, context.Canceled)
		})
		t.Run(name+"/parent first", func(t *testing.T) {
			h := lock(t)
			defer h.Release(t.Context())
			cause := errors.New("parent's cause")
			parent, cancelParent := context.WithCancelCause(t.Context())
			ctx, cancel := h.Context(parent)
			defer cancel()
			if askFirst {
				_ = ctx.Done()
			}
			cancelParent(cause)
			check(t, ctx, context.Canceled, cause)
		})
	}
	t.Run("after the end", func(t *testing.T) {
		h := lock(t)
		if err := h.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := h.Context(t.Context())
		defer cancel()
		check(t, ctx, context.Canceled, fence.ErrReleased)
	})
	t.Run("values", func(t *testing.T) {
		type key struct{}
		h := lock(t)
		defer h.Release(t.Context())
		ctx, cancel := h.Context(context.WithValue(t.Context(), key{}, "v"))
		defer cancel()
		if v := ctx.Value(key{}); v != "v" {
			t.Errorf("Value = %v; want the parent's", v)
		}
	})
}
