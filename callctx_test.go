package fence

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// A call's context behaves as context.WithDeadline over its parent (or
// over context.WithoutCancel of it, when detached), whichever of its
// methods is asked first.
func TestCallCtxIsAWithDeadline(t *testing.T) {
	t.Parallel()
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	t.Run("deadline seen by Err alone", func(t *testing.T) {
		t.Parallel()
		var c callCtx
		c.init(parent, time.Now(), time.Millisecond, false)
		defer c.stop()
		time.Sleep(5 * time.Millisecond)
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err past the deadline = %v; want DeadlineExceeded", err)
		}
		select {
		case <-c.Done():
		default:
			t.Fatal("Done not closed after Err said the deadline passed")
		}
	})
	t.Run("deadline closes Done", func(t *testing.T) {
		t.Parallel()
		var c callCtx
		c.init(parent, time.Now(), time.Millisecond, false)
		defer c.stop()
		<-c.Done()
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err = %v; want DeadlineExceeded", err)
		}
		if d, ok := c.Deadline(); !ok || d.IsZero() {
			t.Fatalf("Deadline = %v, %v", d, ok)
		}
	})
	t.Run("parent cancellation", func(t *testing.T) {
		t.Parallel()
		p, cancel := context.WithCancel(parent)
		var c, d callCtx
		c.init(p, time.Now(), time.Hour, false)
		d.init(p, time.Now(), time.Hour, true)
		defer c.stop()
		defer d.stop()
		done := c.Done() // made before the cancellation, and after it
		cancel()
		<-done
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Err after the parent's cancel = %v; want Canceled", err)
		}
		if err := d.Err(); err != nil {
			t.Fatalf("detached: Err after the parent's cancel = %v; want nil", err)
		}
		select {
		case <-d.Done():
			t.Fatal("detached: Done closed by the parent's cancel")
		default:
		}
		if v := d.Value(ctxKey{}); v != "v" {
			t.Fatalf("detached: Value = %v; want the parent's", v)
		}
	})
	t.Run("parent deadline", func(t *testing.T) {
		t.Parallel()
		at := time.Now().Add(time.Minute)
		p, cancel := context.WithDeadline(parent, at)
		defer cancel()
		var c, d callCtx
		c.init(p, time.Now(), time.Hour, false)
		d.init(p, time.Now(), time.Hour, true)
		if got, _ := c.Deadline(); !got.Equal(at) {
			t.Errorf("Deadline = %v; want the parent's earlier %v", got, at)
		}
		if got, _ := d.Deadline(); got.Equal(at) {
			t.Errorf("detached: Deadline = %v; want its own", got)
		}
	})
	t.Run("stop", func(t *testing.T) {
		t.Parallel()
		var c, d callCtx
		c.init(parent, time.Now(), time.Hour, false)
		d.init(parent, time.Now(), time.Hour, false)
		done := c.Done()
		c.stop()
		d.stop()
		<-done
		<-d.Done() // made after stop: done at once
		for _, x := range []*callCtx{&c, &d} {
			if err := x.Err(); !errors.Is(err, context.Canceled) {
				t.Errorf("Err after stop = %v; want Canceled", err)
			}
		}
	})
	t.Run("child contexts", func(t *testing.T) {
		t.Parallel()
		var c callCtx
		c.init(parent, time.Now(), 10*time.Millisecond, false)
		defer c.stop()
		child, cancel := context.WithCancel(&c)
		defer cancel()
		<-child.Done()
		if err := context.Cause(child); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("child's cause = %v; want DeadlineExceeded", err)
		}
		if v := child.Value(ctxKey{}); v != "v" {
			t.Fatalf("child's Value = %v; want the parent's", v)
		}
	})
}
