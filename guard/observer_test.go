package guard_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
)

func TestEventsInOrder(t *testing.T) {
	t.Parallel()
	t.Run("held, renewed, released", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		j := startJob(t, t.Context(), e.guard(t, fence.SessionOptions{TTL: ttl}, 0), "job")
		e.advanceTo(t, j, 2*interval, interval)
		if err := j.end(t, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		want := []string{"attempt 1 acquired", "acquired token=1 attempts=1 latency=0s",
			"renewed", "renewed", "released held=20s err=<nil>"}
		if got := e.obs.list(); !slices.Equal(got, want) {
			t.Errorf("events\n%q\nwant\n%q", got, want)
		}
	})
	t.Run("transient failure, loss, release", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.fault.queueRenew(failRenew(errTransient))
		j := startJob(t, t.Context(), e.guard(t, fence.SessionOptions{TTL: ttl, BackoffMin: time.Second, BackoffMax: time.Second}, 0), "job")
		e.advanceTo(t, j, interval+time.Second, interval)
		if err := e.mem.Break(t.Context(), "job"); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(interval)
		waitLost(t, j)
		if err := j.end(t, func() error { return nil }); !errors.Is(err, fence.ErrLeaseLost) {
			t.Fatal(err)
		}
		want := []string{"attempt 1 acquired", "acquired token=1 attempts=1 latency=0s",
			"renew failed", "renewed", "renew failed", "lost", "released held=21s err=fence/memory: release \"job\": lease not held: released or broken"}
		if got := e.obs.list(); !slices.Equal(got, want) {
			t.Errorf("events\n%q\nwant\n%q", got, want)
		}
	})
	t.Run("event payloads", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		var got []any
		e.locker.SetObserver(&fence.Observer{
			AcquireAttempt: func(ev fence.AcquireAttemptEvent) { got = append(got, ev) },
			Acquired:       func(ev fence.AcquiredEvent) { got = append(got, ev) },
			Released:       func(ev fence.ReleasedEvent) { got = append(got, ev) },
		})
		sess, err := fence.NewSession(e.locker, &fence.SessionOptions{Clock: e.clk})
		if err != nil {
			t.Fatal(err)
		}
		var lease fence.Lease
		if err := guard.Run(t.Context(), sess, "job", func(_ context.Context, h *fence.Handle) error { l := h.Lease(); lease = l; return nil }, nil); err != nil {
			t.Fatal(err)
		}
		want := []any{
			fence.AcquireAttemptEvent{Key: "job", Attempt: 1, Outcome: fence.Acquired},
			fence.AcquiredEvent{Lease: lease, Attempts: 1},
			fence.ReleasedEvent{Lease: lease},
		}
		if !slices.Equal(got, want) {
			t.Errorf("events\n%+v\nwant\n%+v", got, want)
		}
	})
}

func TestOutcomeString(t *testing.T) {
	t.Parallel()
	for o, want := range map[fence.Outcome]string{fence.Acquired: "acquired", fence.Busy: "busy", fence.Failed: "failed", 0: "unknown"} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", int(o), got, want)
		}
	}
}
