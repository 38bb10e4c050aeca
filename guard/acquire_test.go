package guard_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fencekit/fence"
)

func TestTryOnceBusy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	holder, err := e.mem.Acquire(t.Context(), "job", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := e.guard(t, fence.SessionOptions{}, 0)
	ran := false
	err = g.Run(t.Context(), "job", func(context.Context, *fence.Handle) error { ran = true; return nil })
	if !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Run on a busy key: %v, want ErrHeld", err)
	}
	var held *fence.HeldError
	if !errors.As(err, &held) || held.Owner != holder.Owner || held.Token != holder.Token {
		t.Errorf("HeldError = %+v, want holder %q token %d", held, holder.Owner, holder.Token)
	}
	if ran {
		t.Error("fn ran on a busy key")
	}
	if got, want := e.obs.list(), []string{"attempt 1 busy"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if n := e.clk.Timers(); n != 0 {
		t.Errorf("%d timers armed after a try-once miss", n)
	}
}

func TestWaitAcquiresAfterRelease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	holder, err := e.mem.Acquire(t.Context(), "job", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := e.guard(t, fence.SessionOptions{BackoffMin: 100 * time.Millisecond, BackoffMax: time.Second}, time.Minute)
	done := make(chan error, 1)
	var got fence.Lease
	go func() {
		done <- g.Run(t.Context(), "job", func(_ context.Context, h *fence.Handle) error { l := h.Lease(); got = l; return nil })
	}()
	// Let a few attempts find the key busy.
	for range 3 {
		if err := e.clk.WaitTimers(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(time.Second)
	}
	if err := e.clk.WaitTimers(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if err := e.mem.Release(t.Context(), holder); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatalf("Run after the holder released: %v", err)
	}
	if got.Token != holder.Token+1 {
		t.Errorf("token %d, want %d", got.Token, holder.Token+1)
	}
	events := e.obs.list()
	want := []string{"attempt 1 busy", "attempt 2 busy", "attempt 3 busy", "attempt 4 busy", "attempt 5 acquired",
		fmt.Sprintf("acquired token=%d attempts=5 latency=4s", got.Token)}
	if !slices.Equal(events[:len(want)], want) {
		t.Errorf("events %q, want prefix %q", events, want)
	}
}

func TestWaitTimesOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.mem.Acquire(t.Context(), "job", time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	const timeout, step = 10 * time.Second, time.Second
	g := e.guard(t, fence.SessionOptions{BackoffMax: step}, timeout)
	done := make(chan error, 1)
	go func() {
		done <- g.Run(t.Context(), "job", func(context.Context, *fence.Handle) error {
			t.Error("fn ran although the key stayed busy")
			return nil
		})
	}()
	for {
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			select {
			case err := <-done:
				done <- err
				cancel()
			case <-ctx.Done():
			}
		}()
		waitErr := e.clk.WaitTimers(ctx, 1)
		cancel()
		if waitErr != nil {
			break
		}
		e.clk.Advance(step)
	}
	err := <-done
	if !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("Run after the timeout: %v, want ErrHeld", err)
	}
	if el := e.elapsed(); el < timeout || el >= timeout+step {
		t.Errorf("gave up after %v of clock time, want [%v, %v)", el, timeout, timeout+step)
	}
}

func TestAcquireErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		key     string
		wait    bool
		faults  int // failing acquire calls before the real ones
		wantErr error
		attempt []string
	}{
		{name: "invalid key, try once", key: "", wantErr: fence.ErrInvalid, attempt: []string{"attempt 1 failed"}},
		{name: "invalid key, wait", key: "", wait: true, wantErr: fence.ErrInvalid, attempt: []string{"attempt 1 failed"}},
		{name: "transient, try once", key: "k", faults: 1, wantErr: errTransient, attempt: []string{"attempt 1 failed"}},
		{name: "transient, wait", key: "k", wait: true, faults: 2,
			attempt: []string{"attempt 1 failed", "attempt 2 failed", "attempt 3 acquired"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			for range tc.faults {
				e.fault.queueAcquire(func(context.Context, string, string, time.Duration, func(context.Context, string, string, time.Duration) (fence.Lease, error)) (fence.Lease, error) {
					return fence.Lease{}, errTransient
				})
			}
			var wait time.Duration
			if tc.wait {
				wait = time.Minute
			}
			g := e.guard(t, fence.SessionOptions{}, wait)
			done := make(chan error, 1)
			go func() { done <- g.Run(t.Context(), tc.key, func(context.Context, *fence.Handle) error { return nil }) }()
			for range tc.faults {
				if !tc.wait {
					break
				}
				if err := e.clk.WaitTimers(t.Context(), 1); err != nil {
					t.Fatal(err)
				}
				e.clk.Advance(5 * time.Second) // the longest backoff step by default
			}
			err := <-done
			if tc.wantErr == nil && err != nil || !errors.Is(err, tc.wantErr) {
				t.Fatalf("Run: %v, want %v", err, tc.wantErr)
			}
			var attempts []string
			for _, ev := range e.obs.list() {
				if len(ev) > 7 && ev[:7] == "attempt" {
					attempts = append(attempts, ev)
				}
			}
			if !slices.Equal(attempts, tc.attempt) {
				t.Errorf("attempts %q, want %q", attempts, tc.attempt)
			}
		})
	}
}

// An Acquire that reached the store but whose answer was lost leaves the
// key held by the guard's owner id; the guard finds it with Inspect and
// uses it instead of failing or waiting for its own lease to expire.
func TestAmbiguousAcquireReconciled(t *testing.T) {
	t.Parallel()
	for _, wait := range []bool{false, true} {
		t.Run(fmt.Sprintf("wait=%v", wait), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fault.queueAcquire(func(ctx context.Context, key, owner string, ttl time.Duration, real func(context.Context, string, string, time.Duration) (fence.Lease, error)) (fence.Lease, error) {
				if _, err := real(ctx, key, owner, ttl); err != nil {
					return fence.Lease{}, err
				}
				return fence.Lease{}, fmt.Errorf("acquire: %w", context.DeadlineExceeded)
			})
			var timeout time.Duration
			if wait {
				timeout = time.Minute
			}
			g := e.guard(t, fence.SessionOptions{}, timeout)
			var got fence.Lease
			err := g.Run(t.Context(), "job", func(_ context.Context, h *fence.Handle) error { l := h.Lease(); got = l; return nil })
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got.Token != 1 {
				t.Errorf("fn got token %d, want the token of the ambiguous acquire, 1", got.Token)
			}
			info, err := e.mem.Inspect(t.Context(), "job")
			if err != nil || info.Held {
				t.Errorf("after Run: %+v, %v; want the key released", info, err)
			}
		})
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.mem.Acquire(t.Context(), "job", time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	g := e.guard(t, fence.SessionOptions{}, time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, "job", func(context.Context, *fence.Handle) error { return nil }) }()
	if err := e.clk.WaitTimers(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if n := e.clk.Timers(); n != 0 {
		t.Errorf("%d timers left armed", n)
	}
}

// An Acquire whose answer is lost because the caller gave up still took
// the key: the guard finds it and releases it instead of running fn.
func TestAmbiguousAcquireAfterCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	e.fault.queueAcquire(func(_ context.Context, key, owner string, ttl time.Duration, real func(context.Context, string, string, time.Duration) (fence.Lease, error)) (fence.Lease, error) {
		if _, err := real(context.WithoutCancel(ctx), key, owner, ttl); err != nil {
			return fence.Lease{}, err
		}
		cancel()
		return fence.Lease{}, ctx.Err()
	})
	err := e.guard(t, fence.SessionOptions{}, 0).Run(ctx, "job", func(context.Context, *fence.Handle) error {
		t.Error("fn ran after the caller cancelled")
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	// Run returned with its ctx; the lease its lost attempt won is given
	// back by a read that goes on in the background.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		info, err := e.mem.Inspect(t.Context(), "job")
		if err == nil && !info.Held && info.Token == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after Run: %+v, %v; want the lease the guard won released", info, err)
		}
	}
}

// A lease won late in wait mode by an attempt whose answer was lost runs
// from that attempt, not from an ambiguous attempt long before it: the
// first attempt's outcome was lost too but a re-read showed the key held
// by another owner, and the holder kept it for longer than a TTL.
func TestLateAmbiguousWinKeepsItsDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const leaseTTL = 30 * time.Second
	holder, err := e.mem.Acquire(t.Context(), "job", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	lost := func(ctx context.Context, key, owner string, ttl time.Duration, real func(context.Context, string, string, time.Duration) (fence.Lease, error)) (fence.Lease, error) {
		if _, err := real(ctx, key, owner, ttl); err != nil && !errors.Is(err, fence.ErrHeld) {
			return fence.Lease{}, err
		}
		return fence.Lease{}, fmt.Errorf("acquire: %w", context.DeadlineExceeded)
	}
	e.fault.queueAcquire(lost) // attempt 1: busy in fact, answer lost
	g := e.guard(t, fence.SessionOptions{TTL: leaseTTL, BackoffMin: time.Second, BackoffMax: 2 * time.Second}, time.Hour)
	j := goJob(t.Context(), g, "job")
	// Busy attempts for three TTLs.
	for e.elapsed() < 3*leaseTTL {
		if err := e.clk.WaitTimers(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(2 * time.Second)
	}
	if err := e.clk.WaitTimers(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if err := e.mem.Release(t.Context(), holder); err != nil {
		t.Fatal(err)
	}
	e.fault.queueAcquire(lost) // the winning attempt loses its answer
	won := e.elapsed()
	e.clk.Advance(2 * time.Second)
	select {
	case <-j.start:
	case <-j.done:
		t.Fatalf("Run returned before running fn: %v", j.err)
	}
	if err := j.ctx.Err(); err != nil {
		t.Fatalf("fn's context is done as fn starts (%v, cause %v); the lease was won at %v", err, context.Cause(j.ctx), won)
	}
	// The lease lives on through renewals well past the first attempt's
	// TTL.
	e.advanceTo(t, j, won+3*leaseTTL, time.Second)
	if err := j.ctx.Err(); err != nil {
		t.Fatalf("lease lost at %v: %v", e.elapsed(), context.Cause(j.ctx))
	}
	if err := j.end(t, func() error { return nil }); err != nil {
		t.Fatalf("Run: %v", err)
	}
}
