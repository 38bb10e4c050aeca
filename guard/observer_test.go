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
		j := startJob(t, t.Context(), e.guard(t, guard.Options{TTL: ttl}), "job")
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
		e.locker.queueRenew(failRenew(errTransient))
		j := startJob(t, t.Context(), e.guard(t, guard.Options{TTL: ttl, BackoffMin: time.Second, BackoffMax: time.Second}), "job")
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
		g, err := guard.New(e.locker, &guard.Options{Clock: e.clk, Observer: &guard.Observer{
			AcquireAttempt: func(ev guard.AcquireAttemptEvent) { got = append(got, ev) },
			Acquired:       func(ev guard.AcquiredEvent) { got = append(got, ev) },
			Released:       func(ev guard.ReleasedEvent) { got = append(got, ev) },
		}})
		if err != nil {
			t.Fatal(err)
		}
		var lease fence.Lease
		if err := g.Do(t.Context(), "job", func(_ context.Context, h *fence.Handle) error { l := h.Lease(); lease = l; return nil }); err != nil {
			t.Fatal(err)
		}
		want := []any{
			guard.AcquireAttemptEvent{Key: "job", Attempt: 1, Outcome: guard.Acquired},
			guard.AcquiredEvent{Lease: lease, Attempts: 1},
			guard.ReleasedEvent{Lease: lease},
		}
		if !slices.Equal(got, want) {
			t.Errorf("events\n%+v\nwant\n%+v", got, want)
		}
	})
}

func TestOutcomeString(t *testing.T) {
	t.Parallel()
	for o, want := range map[guard.Outcome]string{guard.Acquired: "acquired", guard.Busy: "busy", guard.Failed: "failed", 0: "unknown"} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", int(o), got, want)
		}
	}
}
