package guard_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

// TTL 30 s: renewals every 10 s, safety deadline 27 s after the send time
// of the last successful acquire or renew.
const (
	ttl      = 30 * time.Second
	interval = ttl / 3
	deadline = ttl - ttl/10
)

func TestRenewsEveryThirdOfTTL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	j := startJob(t, t.Context(), e.guard(t, fence.SessionOptions{TTL: ttl}, 0), "job")
	for i := 1; i <= 6; i++ {
		e.waitIdle(t, j)
		e.clk.Advance(interval - time.Millisecond)
		e.waitIdle(t, j)
		if ok, _ := e.obs.counts(); ok != i-1 {
			t.Fatalf("%d renewals before %v, want %d", ok, e.elapsed(), i-1)
		}
		e.clk.Advance(time.Millisecond)
		e.waitIdle(t, j)
		if ok, _ := e.obs.counts(); ok != i {
			t.Fatalf("%d renewals at %v, want %d", ok, e.elapsed(), i)
		}
	}
	// A minute in, twice the TTL, the lease is still ours.
	info, err := e.mem.Inspect(t.Context(), "job")
	if err != nil || !info.Held || info.Token != j.lease.Token || info.Owner != j.lease.Owner {
		t.Fatalf("after %v: %+v, %v; want our lease held", e.elapsed(), info, err)
	}
	if j.ctx.Err() != nil {
		t.Fatalf("work context cancelled: %v", context.Cause(j.ctx))
	}
	if err := j.end(t, func() error { return nil }); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestBrokenLockCancelsWork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	j := startJob(t, t.Context(), e.guard(t, fence.SessionOptions{TTL: ttl}, 0), "job")
	e.waitIdle(t, j)
	if err := e.mem.Break(t.Context(), "job"); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(interval) // the next renewal finds the lease gone
	cause := waitLost(t, j)
	var lost *fence.LeaseLostError
	if !errors.As(cause, &lost) || !errors.Is(cause, fence.ErrLeaseLost) || !errors.Is(cause, fence.ErrNotHeld) {
		t.Fatalf("cause %v, want a LeaseLostError wrapping ErrNotHeld", cause)
	}
	if lost.Key != "job" || lost.Token != j.lease.Token {
		t.Errorf("LeaseLostError %+v, want key job token %d", lost, j.lease.Token)
	}
	err := j.end(t, func() error { return context.Cause(j.ctx) })
	if !errors.Is(err, fence.ErrLeaseLost) {
		t.Fatalf("Run: %v, want ErrLeaseLost", err)
	}
}

// Renewals that fail transiently are retried; the work is cancelled when
// the safety deadline of the last success passes, and not before.
func TestTransientFailuresCancelAtDeadline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(e *env)
		// last is the send time of the last successful call.
		last time.Duration
	}{
		{name: "from acquisition", last: 0, setup: func(e *env) { e.fault.setRenew(failRenew(errTransient)) }},
		{name: "from last renewal", last: 2 * interval, setup: func(e *env) {
			e.fault.queueRenew(nil, nil) // two good renewals
			e.fault.setRenew(failRenew(errTransient))
		}},
		// A renewal that the store applied but whose answer was lost
		// does not move the deadline: only a success does.
		{name: "ambiguous renewal does not count", last: 0, setup: func(e *env) {
			e.fault.queueRenew(appliedRenew)
			e.fault.setRenew(failRenew(errTransient))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tc.setup(e)
			j := startJob(t, t.Context(), e.guard(t, fence.SessionOptions{TTL: ttl}, 0), "job")
			e.advanceTo(t, j, tc.last+deadline-time.Millisecond, time.Second)
			if j.ctx.Err() != nil {
				t.Fatalf("cancelled before the deadline: %v", context.Cause(j.ctx))
			}
			if _, failed := e.obs.counts(); failed < 3 {
				t.Errorf("%d failed renewals before the deadline, want retries", failed)
			}
			e.clk.Advance(2 * time.Millisecond)
			cause := waitLost(t, j)
			if !errors.Is(cause, fence.ErrLeaseLost) || !errors.Is(cause, fence.ErrDeadlinePassed) {
				t.Fatalf("cause %v, want lease lost at the deadline", cause)
			}
			if tc.name != "ambiguous renewal does not count" && !errors.Is(cause, errTransient) {
				t.Errorf("cause %v does not carry the last renewal error", cause)
			}
			if err := j.end(t, func() error { return nil }); !errors.Is(err, fence.ErrLeaseLost) {
				t.Fatalf("Run: %v, want ErrLeaseLost", err)
			}
		})
	}
}

// A renewal call that hangs cannot hold back the deadline; the release
// waits for the hung call to return.
func TestHungRenewalCancelsAtDeadline(t *testing.T) {
	// Not parallel: waitForFrame looks at every goroutine, and parallel
	// tests would have their own Run calls waiting in the same frame.
	e := newEnv(t)
	entered, unblock := make(chan struct{}, 1), make(chan struct{})
	e.fault.setRenew(hangRenew(entered, unblock))
	j := startJob(t, t.Context(), e.guard(t, fence.SessionOptions{TTL: ttl, CallTimeout: time.Hour}, 0), "job")
	e.waitIdle(t, j)
	e.clk.Advance(interval)
	<-entered
	e.clk.Advance(deadline - interval - time.Millisecond)
	if j.ctx.Err() != nil || e.clk.Timers() != 1 {
		t.Fatalf("before the deadline: work %v, %d timers; want running with the deadline armed", j.ctx.Err(), e.clk.Timers())
	}
	e.clk.Advance(2 * time.Millisecond)
	cause := waitLost(t, j)
	if !errors.Is(cause, fence.ErrDeadlinePassed) {
		t.Fatalf("cause %v, want the deadline", cause)
	}
	done := make(chan error, 1)
	go func() { done <- j.end(t, func() error { return nil }) }()
	// Run must wait for the renewal in flight before it releases.
	waitForFrame(t, "fence.(*Session).letGo")
	if slices.ContainsFunc(e.fault.calls(), func(s string) bool { return strings.HasPrefix(s, "release") }) {
		t.Fatal("released while a renewal was in flight")
	}
	close(unblock)
	if err := <-done; !errors.Is(err, fence.ErrLeaseLost) {
		t.Fatalf("Run: %v, want ErrLeaseLost", err)
	}
	calls := e.fault.calls()
	if i, r := slices.Index(calls, "renew err="+errTransient.Error()), slices.IndexFunc(calls, func(s string) bool { return strings.HasPrefix(s, "release") }); i < 0 || r < i {
		t.Errorf("calls %q: want the hung renewal to return before the release", calls)
	}
}

func TestAmbiguousRenewal(t *testing.T) {
	t.Parallel()
	// The store applied the renewal: Inspect shows the lease still ours,
	// so the session retries and carries on.
	t.Run("applied", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.fault.queueRenew(appliedRenew)
		j := startJob(t, t.Context(), e.guard(t, fence.SessionOptions{TTL: ttl}, 0), "job")
		e.advanceTo(t, j, 3*interval+time.Second, time.Second)
		if j.ctx.Err() != nil {
			t.Fatalf("work cancelled: %v", context.Cause(j.ctx))
		}
		ok, failed := e.obs.counts()
		if failed != 1 || ok < 3 {
			t.Errorf("%d renewals ok, %d failed; want the ambiguous one retried", ok, failed)
		}
		if !slices.Contains(e.fault.calls(), "inspect held=true err=<nil>") {
			t.Errorf("calls %q: want an Inspect after the ambiguous renewal", e.fault.calls())
		}
		if err := j.end(t, func() error { return nil }); err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
	// The answer was lost and meanwhile another owner took the key:
	// Inspect shows it, and the loss is definitive at once.
	t.Run("taken over", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		var other fence.Lease
		e.fault.queueRenew(func(ctx context.Context, _ fence.Lease, _ func(context.Context, fence.Lease) error) error {
			if err := e.mem.Break(ctx, "job"); err != nil {
				return err
			}
			var err error
			if other, err = e.mem.Acquire(ctx, "job", time.Hour, nil); err != nil {
				return err
			}
			return context.DeadlineExceeded
		})
		j := startJob(t, t.Context(), e.guard(t, fence.SessionOptions{TTL: ttl}, 0), "job")
		e.waitIdle(t, j)
		e.clk.Advance(interval)
		cause := waitLost(t, j)
		var rec *fence.ReconcileError
		if !errors.Is(cause, fence.ErrLeaseLost) || !errors.Is(cause, fence.ErrNotHeld) || !errors.As(cause, &rec) {
			t.Fatalf("cause %v, want a ReconcileError", cause)
		}
		if rec.Found.Owner != other.Owner || rec.Found.Token != other.Token {
			t.Errorf("ReconcileError found %+v, want the new holder %+v", rec.Found, other)
		}
		if err := j.end(t, func() error { return nil }); !errors.Is(err, fence.ErrLeaseLost) {
			t.Fatalf("Run: %v, want ErrLeaseLost", err)
		}
		info, err := e.mem.Inspect(t.Context(), "job")
		if err != nil || !info.Held || info.Owner != other.Owner {
			t.Errorf("after Run: %+v, %v; want the new holder's lease left in place", info, err)
		}
	})
}

// waitForFrame waits until some goroutine's stack contains frame: a way
// to know that a goroutine is blocked where the test expects, without
// sleeping for a guessed time. Tests that use it do not run in parallel
// with others.
func waitForFrame(t *testing.T, frame string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for {
		if strings.Contains(string(buf[:runtime.Stack(buf, true)]), frame) {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("no goroutine reached %s", frame)
		case <-time.After(time.Millisecond):
		}
	}
}

// When fn returns while a renewal hangs, Run waits for the renewal to
// return, then releases; the hang is not a loss.
func TestReturnDuringHungRenewal(t *testing.T) {
	// Not parallel: waitForFrame looks at every goroutine, and parallel
	// tests would have their own Run calls waiting in the same frame.
	e := newEnv(t)
	entered, unblock := make(chan struct{}, 1), make(chan struct{})
	e.fault.queueRenew(hangRenew(entered, unblock))
	j := startJob(t, t.Context(), e.guard(t, fence.SessionOptions{TTL: ttl, CallTimeout: time.Hour}, 0), "job")
	e.waitIdle(t, j)
	e.clk.Advance(interval)
	<-entered
	done := make(chan error, 1)
	go func() { done <- j.end(t, func() error { return nil }) }()
	waitForFrame(t, "fence.(*Session).letGo")
	close(unblock)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v, want nil", err)
	}
	if got := e.fault.calls(); !slices.Equal(got, []string{"acquire err=<nil>", "renew err=" + errTransient.Error(), "release err=<nil>"}) {
		t.Errorf("calls %q", got)
	}
}

func TestErrorMessages(t *testing.T) {
	t.Parallel()
	lease := fence.Lease{Key: "job", Owner: "me", Token: 7}
	tests := []struct {
		err  error
		want string
	}{
		{&fence.DeadlineError{Err: errTransient}, "fence: lease safety deadline passed after renewal failed: " + errTransient.Error()},
		{&fence.DeadlineError{InFlight: true}, "fence: lease safety deadline passed while a renewal was in flight"},
		{&fence.DeadlineError{}, "fence: lease safety deadline passed before a renewal was sent"},
		{&fence.ReconcileError{Lease: lease, Found: fence.LockInfo{Key: "job", Held: true, Owner: "you", Token: 8}, RenewErr: context.DeadlineExceeded},
			`fence: after an ambiguous renewal (context deadline exceeded) the lock "job" is held by another owner with token 8, not ours (token 7)`},
		{&fence.ReconcileError{Lease: lease, Found: fence.LockInfo{Key: "job", Token: 7}, RenewErr: errTransient},
			`fence: after an ambiguous renewal (` + errTransient.Error() + `) the lock "job" is free, not ours (token 7)`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
