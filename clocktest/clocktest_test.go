package clocktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/fencekit/fence/clocktest"
)

func TestFakeTimers(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := clocktest.New(start)
	late := c.NewTimer(2 * time.Second)
	early := c.NewTimer(time.Second)
	stopped := c.NewTimer(time.Second)
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop should report true once, then false")
	}
	if n := c.Timers(); n != 2 {
		t.Fatalf("Timers() = %d; want 2", n)
	}
	c.Advance(999 * time.Millisecond)
	select {
	case <-early.C():
		t.Fatal("timer fired before its deadline")
	default:
	}
	c.Advance(time.Millisecond)
	if got := <-early.C(); !got.Equal(start.Add(time.Second)) {
		t.Fatalf("timer delivered %v", got)
	}
	select {
	case <-late.C():
		t.Fatal("late timer fired early")
	case <-stopped.C():
		t.Fatal("stopped timer fired")
	default:
	}
	c.Advance(time.Hour)
	<-late.C()
	if !c.Now().Equal(start.Add(time.Hour + time.Second)) {
		t.Fatalf("Now() = %v", c.Now())
	}
	if fired := c.NewTimer(0); len(fired.C()) != 1 {
		t.Fatal("a timer of 0 should fire at once")
	}
}

func TestWaitTimers(t *testing.T) {
	t.Parallel()
	c := clocktest.New(time.Unix(0, 0))
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-c.NewTimer(time.Minute).C()
	}()
	if err := c.WaitTimers(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	<-done
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.WaitTimers(ctx, 5); err == nil {
		t.Fatal("WaitTimers with a cancelled ctx returned nil")
	}
}
