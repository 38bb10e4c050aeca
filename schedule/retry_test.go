package schedule_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/testing/faultlock"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
	"github.com/fencekit/fence/schedule"
)

// Fake-clock tests of RetryWithin on the memory locker: the windows and
// leases of the tests above (one-minute windows, 20 s leases), an
// allowance of 30 s, and the clock at the start of the 09:00 window.
const retry = 30 * time.Second

type result struct {
	out schedule.Outcome
	err error
}

// attemptAsync starts job.Attempt(ctx) and returns where its result
// arrives.
func attemptAsync(ctx context.Context, job *schedule.Job) <-chan result {
	c := make(chan result, 1)
	go func() {
		out, err := job.Attempt(ctx)
		c <- result{out, err}
	}()
	return c
}

// await returns the result from c, failing the test if none comes within
// 10 s of real time.
func await(t *testing.T, c <-chan result, what string) result {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return", what)
		return result{}
	}
}

// waitTimers waits until clock has n timers armed.
func waitTimers(t *testing.T, clock *clocktest.Fake, n int, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := clock.WaitTimers(ctx, n); err != nil {
		t.Fatalf("%s: %d timers armed, want %d", what, clock.Timers(), n)
	}
}

// missedOf returns the Missed events of window, on any replica.
func (f *farm) missedOf(window time.Time) []event {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []event
	for _, e := range f.events {
		if e.Outcome == schedule.Missed && e.Window.Equal(window) {
			out = append(out, e)
		}
	}
	return out
}

// A run is stopped mid-job (the replica's ctx cancelled, as on SIGTERM):
// its lock is released but its window is not marked done. With
// RetryWithin, the replica that found the lock busy is waiting for it,
// is woken by the release (the fake clock never moves), runs the window
// again under a higher token, and the stopped run's late write is
// refused; a third replica then finds the window done. With RetryWithin
// 0 the waiting replica finds the lock busy at once, and the window is
// lost: a later attempt finds it done.
func TestStoppedRun(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		retry time.Duration
	}{{"RetryWithin", retry}, {"zero", 0}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := clocktest.New(window)
			store := memory.New(&memory.Options{Clock: clock})
			report := memres.New(nil)
			f := newFarm(t, sameStore(store, 3), clock, nil, interval, fence.SessionOptions{TTL: atMost}, schedule.Options{RetryWithin: tt.retry},
				func(f *farm, r *replica, ctx context.Context, h *fence.Handle) error {
					if r.id == 0 {
						return f.block(ctx)
					}
					return report.Put(ctx, "report", h.Token(), []byte("by the rerun"))
				})
			a, b, c := f.reps[0].job, f.reps[1].job, f.reps[2].job
			stop, cancel := context.WithCancel(t.Context())
			defer cancel()
			first := attemptAsync(stop, a)
			waitTimers(t, clock, 2, "the run's keepalive")
			if len(f.runsOf(window)) != 1 {
				t.Fatalf("the first run has not started\n%s", f.history())
			}
			second := attemptAsync(t.Context(), b)
			if tt.retry == 0 {
				if r := await(t, second, "the attempt beside the run"); r.out != schedule.Busy || r.err != nil {
					t.Fatalf("the attempt beside the run: %v, %v; want busy at once", r.out, r.err)
				}
			} else {
				waitTimers(t, clock, 3, "the waiting attempt")
			}
			cancel()
			if r := await(t, first, "the stopped run"); r.out != schedule.Ran || !errors.Is(r.err, context.Canceled) {
				t.Fatalf("the stopped run's attempt: %v, %v; want ran, cancelled", r.out, r.err)
			}
			es := f.attemptsOf(0, window)
			if len(es) != 1 || es[0].Finished {
				t.Fatalf("the stopped run's events %+v, want one not finished", es)
			}
			firstRun := f.runsOf(window)[0]
			if tt.retry == 0 {
				if r := await(t, attemptAsync(t.Context(), c), "the attempt after the stop"); r.out != schedule.Done || r.err != nil {
					t.Fatalf("an attempt after the stop: %v, %v; want done (the window is lost)", r.out, r.err)
				}
				if runs := f.runsOf(window); len(runs) != 1 {
					t.Fatalf("the window ran %d times with RetryWithin 0\n%s", len(runs), f.history())
				}
				return
			}
			if r := await(t, second, "the waiting attempt"); r.out != schedule.Retried || r.err != nil {
				t.Fatalf("the waiting attempt: %v, %v; want retried\n%s", r.out, r.err, f.history())
			}
			runs := f.runsOf(window)
			if len(runs) != 2 || runs[1].id != 1 || runs[1].lease.Token <= firstRun.lease.Token {
				t.Fatalf("runs %+v, want a rerun by replica 1 with a token above %d", runs, firstRun.lease.Token)
			}
			if es := f.attemptsOf(1, window); len(es) != 1 || !es[0].Finished || es[0].Lease.Token != runs[1].lease.Token {
				t.Fatalf("the rerun's events %+v, want one finished", es)
			}
			if err := report.Put(t.Context(), "report", firstRun.lease.Token, []byte("late")); !errors.Is(err, fence.ErrStaleToken) {
				t.Fatalf("the stopped run's late write: %v, want ErrStaleToken", err)
			}
			if r := await(t, attemptAsync(t.Context(), c), "the third attempt"); r.out != schedule.Done || r.err != nil {
				t.Fatalf("the third attempt: %v, %v; want done", r.out, r.err)
			}
			if len(f.runsOf(window)) != 2 || len(f.missedOf(window)) != 0 {
				t.Fatalf("a finished window ran again, or was reported missed\n%s", f.history())
			}
			if clock.Now() != window {
				t.Fatal("the clock moved")
			}
		})
	}
}

// A job that returns an error has finished: the window is not run again.
// The replica that found the lock busy during LockAtLeastFor waits, is
// woken by the release, and finds the window done.
func TestJobErrorNotRetried(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	clock := clocktest.New(window)
	store := memory.New(&memory.Options{Clock: clock})
	f := newFarm(t, sameStore(store, 2), clock, nil, interval, fence.SessionOptions{TTL: atMost},
		schedule.Options{RetryWithin: retry, LockAtLeastFor: atLeast},
		func(*farm, *replica, context.Context, *fence.Handle) error { return boom })
	first := attemptAsync(t.Context(), f.reps[0].job)
	waitTimers(t, clock, 3, "the hold") // the hold and the keepalive's two
	second := attemptAsync(t.Context(), f.reps[1].job)
	waitTimers(t, clock, 4, "the waiting attempt")
	clock.Advance(atLeast)
	if r := await(t, first, "the run"); r.out != schedule.Ran || !errors.Is(r.err, boom) {
		t.Fatalf("the run: %v, %v; want ran with the job's error", r.out, r.err)
	}
	if es := f.attemptsOf(0, window); len(es) != 1 || !es[0].Finished || !errors.Is(es[0].Err, boom) {
		t.Fatalf("the run's events %+v, want one finished with the job's error", es)
	}
	if r := await(t, second, "the waiting attempt"); r.out != schedule.Done || r.err != nil {
		t.Fatalf("the waiting attempt: %v, %v; want done", r.out, r.err)
	}
	if runs := f.runsOf(window); len(runs) != 1 {
		t.Fatalf("the window ran %d times", len(runs))
	}
	done, err := store.Inspect(t.Context(), f.name+":2025-03-01T09:00:00Z:done")
	if err != nil || done.Held || !done.Token.Valid() {
		t.Fatalf("the window's done mark is %+v, %v; want a free key with a token", done, err)
	}
}

// A replica waits for a busy lock only until the window's allowance
// ends, then reports busy.
func TestWaitEndsWithAllowance(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(window)
	store := memory.New(&memory.Options{Clock: clock})
	f := newFarm(t, sameStore(store, 2), clock, nil, interval, fence.SessionOptions{TTL: atMost}, schedule.Options{RetryWithin: retry},
		func(f *farm, r *replica, ctx context.Context, _ *fence.Handle) error { return f.block(ctx) })
	stop, cancel := context.WithCancel(t.Context())
	defer cancel()
	first := attemptAsync(stop, f.reps[0].job)
	waitTimers(t, clock, 2, "the run's keepalive")
	second := attemptAsync(t.Context(), f.reps[1].job)
	waitTimers(t, clock, 3, "the waiting attempt")
	// Move the clock on while the waiter sleeps: the run's keepalive and
	// the waiter each have their timers armed (3), until the waiter
	// returns.
	var r result
	for returned := false; !returned; {
		clock.Advance(step)
		giveUp := time.Now().Add(10 * time.Second)
		for settled := false; !returned && !settled; {
			select {
			case r = <-second:
				returned = true
			default:
				settled = clock.Timers() >= 3
				if time.Now().After(giveUp) {
					t.Fatalf("%v into the window: %d timers armed, and the waiter has not returned", clock.Now().Sub(window), clock.Timers())
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
	}
	if waited := clock.Now().Sub(window); r.out != schedule.Busy || r.err != nil || waited < retry || waited > retry+step {
		t.Fatalf("the waiting attempt returned %v into the window: %v, %v; want busy after %v", waited, r.out, r.err, retry)
	}
	cancel()
	await(t, first, "the stopped run")
}

// A window whose run was stopped, and not run again within the
// allowance, is reported missed once: by a replica that takes the lock
// later in the window, which marks it done, so that the next attempt in
// it finds it done and the replica that starts the next window reports
// nothing more.
func TestMissedInWindow(t *testing.T) {
	t.Parallel()
	f, clock := stoppedWindow(t, 3, schedule.Options{RetryWithin: retry})
	clock.Advance(retry + time.Second)
	b, c := f.reps[1].job, f.reps[2].job
	if out, err := b.Attempt(t.Context()); out != schedule.Missed || err != nil {
		t.Fatalf("an attempt after the allowance: %v, %v; want missed\n%s", out, err, f.history())
	}
	if out, err := c.Attempt(t.Context()); out != schedule.Done || err != nil {
		t.Fatalf("the next attempt: %v, %v; want done", out, err)
	}
	clock.Advance(interval)
	if out, err := c.Attempt(t.Context()); out != schedule.Ran || err != nil {
		t.Fatalf("the next window's attempt: %v, %v; want ran", out, err)
	}
	if m := f.missedOf(window); len(m) != 1 || m[0].id != 1 || m[0].Lease.Token == 0 {
		t.Fatalf("missed events %+v, want one by replica 1 under the lock\n%s", m, f.history())
	}
	if len(f.runsOf(window)) != 1 {
		t.Fatalf("the window ran again\n%s", f.history())
	}
}

// A window whose run was stopped, and that no replica looked at again in
// it, is reported missed by the replica that starts the next window,
// before that window's run; once, and not again by the others.
func TestMissedReportedByNextWindow(t *testing.T) {
	t.Parallel()
	f, clock := stoppedWindow(t, 3, schedule.Options{RetryWithin: retry})
	clock.Advance(interval)
	next := window.Add(interval)
	for id, want := range []schedule.Outcome{schedule.Ran, schedule.Done} {
		if out, err := f.reps[id+1].job.Attempt(t.Context()); out != want || err != nil {
			t.Fatalf("replica %d's attempt at the next window: %v, %v; want %v", id+1, out, err, want)
		}
	}
	es := f.eventsOf(1)
	if len(es) != 2 || es[0].Outcome != schedule.Missed || !es[0].Window.Equal(window) || es[1].Outcome != schedule.Ran || !es[1].Window.Equal(next) {
		t.Fatalf("replica 1's events %+v, want the first window missed, then the next ran", es)
	}
	if es[0].Lease.Token != es[1].Lease.Token {
		t.Fatalf("the missed window was reported under token %d, the next window ran under %d: want one lock", es[0].Lease.Token, es[1].Lease.Token)
	}
	if m := f.missedOf(window); len(m) != 1 {
		t.Fatalf("%d missed events, want one\n%s", len(m), f.history())
	}
}

// With RetryWithin 0 nothing is reported missed: the replica that starts
// the next window finds the stopped window as it was before the option.
func TestNoMissedWithoutRetry(t *testing.T) {
	t.Parallel()
	f, clock := stoppedWindow(t, 2, schedule.Options{})
	clock.Advance(interval)
	if out, err := f.reps[1].job.Attempt(t.Context()); out != schedule.Ran || err != nil {
		t.Fatalf("the next window's attempt: %v, %v; want ran", out, err)
	}
	if es := f.eventsOf(1); len(es) != 1 {
		t.Fatalf("events %+v, want only the run", es)
	}
}

// A window that no replica started is run by the first replica that
// attempts it, even after its allowance: the allowance bounds the runs
// again, not the first.
func TestLateFirstRun(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(window.Add(retry + 15*time.Second))
	f := newFarm(t, sameStore(memory.New(&memory.Options{Clock: clock}), 1), clock, nil, interval,
		fence.SessionOptions{TTL: atMost}, schedule.Options{RetryWithin: retry}, nil)
	if out, err := f.reps[0].job.Attempt(t.Context()); out != schedule.Ran || err != nil {
		t.Fatalf("Attempt: %v, %v; want ran", out, err)
	}
	if es := f.eventsOf(0); len(es) != 1 || !es[0].Finished {
		t.Fatalf("events %+v, want one finished run", es)
	}
}

// stoppedWindow returns a farm of n replicas with opts on one memory
// store, and its fake clock at the start of window: replica 0 has run the
// window's job, which blocks until stopped, and was stopped mid-run; the
// other replicas' jobs return at once.
func stoppedWindow(t *testing.T, n int, opts schedule.Options) (*farm, *clocktest.Fake) {
	t.Helper()
	clock := clocktest.New(window)
	store := memory.New(&memory.Options{Clock: clock})
	f := newFarm(t, sameStore(store, n), clock, nil, interval, fence.SessionOptions{TTL: atMost}, opts,
		func(f *farm, r *replica, ctx context.Context, _ *fence.Handle) error {
			if r.id == 0 {
				return f.block(ctx)
			}
			return nil
		})
	stop, cancel := context.WithCancel(t.Context())
	defer cancel()
	first := attemptAsync(stop, f.reps[0].job)
	waitTimers(t, clock, 2, "the run's keepalive")
	cancel()
	if r := await(t, first, "the stopped run"); r.out != schedule.Ran || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the stopped run: %v, %v; want ran, cancelled", r.out, r.err)
	}
	return f, clock
}

// A replica stopped while it waits for the lock returns at once, with
// Failed and the ctx's error, also when its store never answers.
func TestStoppedWhileWaiting(t *testing.T) {
	t.Parallel()
	for _, hang := range []bool{false, true} {
		t.Run(map[bool]string{false: "store answers", true: "store hangs"}[hang], func(t *testing.T) {
			t.Parallel()
			clock := clocktest.New(window)
			store := memory.New(&memory.Options{Clock: clock})
			f := newFarm(t, sameStore(store, 2), clock, nil, interval, fence.SessionOptions{TTL: atMost}, schedule.Options{RetryWithin: retry},
				func(f *farm, r *replica, ctx context.Context, _ *fence.Handle) error { return f.block(ctx) })
			holder, stopHolder := context.WithCancel(t.Context())
			defer stopHolder()
			first := attemptAsync(holder, f.reps[0].job)
			waitTimers(t, clock, 2, "the run's keepalive")
			waiter, stopWaiter := context.WithCancel(t.Context())
			second := attemptAsync(waiter, f.reps[1].job)
			waitTimers(t, clock, 3, "the waiting attempt")
			if hang {
				f.reps[1].p.Set(faultlock.Hanging)
				clock.Advance(time.Second) // the waiter asks the store again, which never answers
			}
			stopWaiter()
			if r := await(t, second, "the stopped waiter"); r.out != schedule.Failed || !errors.Is(r.err, context.Canceled) {
				t.Fatalf("the stopped waiter: %v, %v; want failed, cancelled", r.out, r.err)
			}
			stopHolder()
			await(t, first, "the stopped run")
		})
	}
}
