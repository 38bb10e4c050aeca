package schedule_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/testing/faultlock"
	"github.com/fencekit/fence/lockers/memory"
	"github.com/fencekit/fence/schedule"
)

// Fake-clock tests: one-minute windows, a lease of 20 s renewed every
// 6.7 s, runs held 10 s; steps of 5 s land on every window start. The
// clock starts 30 s into the 09:00 window.
const (
	interval = time.Minute
	atMost   = 20 * time.Second
	atLeast  = 10 * time.Second
	step     = 5 * time.Second
)

var (
	start  = time.Date(2025, 3, 1, 9, 0, 30, 0, time.UTC)
	window = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC) // the window holding start
)

func sameStore(store *fence.Locker, n int) []*fence.Locker {
	stores := make([]*fence.Locker, n)
	for i := range stores {
		stores[i] = store // one store, as if each replica had its own client of it
	}
	return stores
}

// Three replicas, one on time, one lagging 5 s, one lagging 20 s, over
// six windows: every window runs once. From the second window on the
// replica on time runs it; the one lagging 5 s tries while the lock is
// held for LockAtLeastFor (busy), the one lagging 20 s after it was
// released, and finds the window marked (done). TestEachWindowOnce runs
// it on every store.
func testEachWindowOnce(t *testing.T, clock *clocktest.Fake, stores []*fence.Locker) {
	f := newFarm(t, stores, clock, []time.Duration{0, step, 4 * step}, interval,
		fence.SessionOptions{TTL: atMost}, schedule.Options{LockAtLeastFor: atLeast}, nil)
	f.start()
	f.advance(6*interval, step)
	f.checkAtMostOnce()
	for k := range 7 {
		w := window.Add(time.Duration(k) * interval)
		if got := f.runsOf(w); len(got) != 1 {
			t.Fatalf("window %v ran %d times, want once\n%s", w, len(got), f.history())
		}
		if k == 0 {
			continue // all three start in the same window
		}
		want := []schedule.Outcome{schedule.Ran, schedule.Busy, schedule.Done}
		for id, outcome := range want {
			es := f.attemptsOf(id, w)
			if len(es) != 1 || es[0].Outcome != outcome || es[0].Err != nil {
				t.Errorf("window %v, replica %d: attempts %+v, want one %v", w, id, es, outcome)
			}
		}
	}
}

// A job that finishes at once keeps the lock until LockAtLeastFor has
// passed; after that the window is still marked done.
func TestLockAtLeastFor(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(start)
	store := memory.New(&memory.Options{Clock: clock})
	f := newFarm(t, sameStore(store, 2), clock, nil, interval,
		fence.SessionOptions{TTL: atMost}, schedule.Options{LockAtLeastFor: atLeast}, nil)
	a, b := f.reps[0].job, f.reps[1].job
	type result struct {
		out schedule.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := a.Attempt(t.Context())
		done <- result{out, err}
	}()
	wait, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := clock.WaitTimers(wait, 3); err != nil { // the hold and the keepalive's two
		t.Fatalf("the run does not hold the lock: %v", err)
	}
	if len(f.runsOf(window)) != 1 {
		t.Fatal("the job has not run")
	}
	for _, d := range []time.Duration{0, atLeast - time.Second} {
		clock.Advance(d)
		if info, err := store.Inspect(t.Context(), f.name); err != nil || !info.Held {
			t.Fatalf("%v after the run started the lock is %+v, %v; want it held", clock.Now().Sub(start), info, err)
		}
		if out, err := b.Attempt(t.Context()); out != schedule.Busy || err != nil {
			t.Fatalf("another replica's attempt during the hold: %v, %v; want busy", out, err)
		}
	}
	clock.Advance(time.Second)
	if r := <-done; r.out != schedule.Ran || r.err != nil {
		t.Fatalf("the run's attempt: %v, %v; want ran", r.out, r.err)
	}
	if info, err := store.Inspect(t.Context(), f.name); err != nil || info.Held {
		t.Fatalf("after LockAtLeastFor the lock is %+v, %v; want it released", info, err)
	}
	// A replica that ran the window again would hold the lock for
	// LockAtLeastFor on a clock that no longer moves: bound its wait.
	if out, err := b.Attempt(wait); out != schedule.Done || err != nil {
		t.Fatalf("another replica's attempt after the hold: %v, %v; want done", out, err)
	}
	if got := f.runsOf(window); len(got) != 1 {
		t.Fatalf("the window ran %d times", len(got))
	}
	mark, err := store.Inspect(t.Context(), f.name+":2025-03-01T09:00:00Z")
	if err != nil || mark.Held || !mark.Token.Valid() {
		t.Fatalf("the window's mark is %+v, %v; want a free key with a token", mark, err)
	}
}

// The replica running the first window dies mid-job (its store calls
// fail from then on): its lease is lost, the window is not run again, and
// the next window runs on another replica with a higher token.
func TestDeadReplicaNextWindowElsewhere(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(start)
	store := memory.New(&memory.Options{Clock: clock})
	dead := -1
	f := newFarm(t, sameStore(store, 3), clock, nil, interval, fence.SessionOptions{TTL: atMost}, schedule.Options{},
		func(f *farm, r *replica, ctx context.Context, _ *fence.Handle) error {
			if dead >= 0 { // runs never overlap here, so dead needs no lock
				return nil
			}
			dead = r.id
			r.p.Set(faultlock.Failing)
			return f.block(ctx)
		})
	f.start()
	f.advance(3*interval, step)
	f.checkAtMostOnce()
	first := f.runsOf(window)
	if len(first) != 1 || first[0].id != dead {
		t.Fatalf("first window runs %+v, want one by the replica that died", first)
	}
	es := f.attemptsOf(dead, window)
	if len(es) != 1 || es[0].Outcome != schedule.Ran || !errors.Is(es[0].Err, fence.ErrLeaseLost) || !errors.Is(es[0].Err, fence.ErrDeadlinePassed) {
		t.Fatalf("the dead replica's attempts %+v, want a run that lost its lease by the safety deadline", es)
	}
	next := f.runsOf(window.Add(interval))
	if len(next) != 1 || next[0].id == dead || next[0].lease.Token <= first[0].lease.Token {
		t.Fatalf("next window runs %+v, want one elsewhere with a token above %d\n%s", next, first[0].lease.Token, f.history())
	}
	failed := false
	for _, e := range f.eventsOf(dead) {
		failed = failed || e.Outcome == schedule.Failed && errors.Is(e.Err, faultlock.ErrPartitioned)
	}
	if !failed {
		t.Errorf("the dead replica reported no failed attempt:\n%s", f.history())
	}
}

func TestJobErrorReported(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	clock := clocktest.New(start)
	f := newFarm(t, sameStore(memory.New(&memory.Options{Clock: clock}), 1), clock, nil, interval, fence.SessionOptions{}, schedule.Options{},
		func(*farm, *replica, context.Context, *fence.Handle) error { return boom })
	out, err := f.reps[0].job.Attempt(t.Context())
	if out != schedule.Ran || !errors.Is(err, boom) {
		t.Fatalf("Attempt: %v, %v; want ran with the job's error", out, err)
	}
	es := f.eventsOf(0)
	if len(es) != 1 || es[0].Outcome != schedule.Ran || !errors.Is(es[0].Err, boom) || !es[0].Window.Equal(window) || es[0].Lease.Token != 1 {
		t.Fatalf("events %+v, want one run in %v with token 1 and the job's error", es, window)
	}
}

func TestRunReturnsOnInvalidKey(t *testing.T) {
	t.Parallel()
	name := strings.Repeat("n", memory.MaxKeyLen+1)
	job, err := schedule.New(newSession(t, memory.New(nil), nil), name, time.Hour, nop, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Run(t.Context()); !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("Run: %v, want ErrInvalid", err)
	}
}

// Run returns once its session is closed, instead of failing every
// window from then on.
func TestRunReturnsOnClosedSession(t *testing.T) {
	t.Parallel()
	sess := newSession(t, memory.New(nil), nil)
	if err := sess.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	job, err := schedule.New(sess, "j", time.Hour, nop, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Run(t.Context()); !errors.Is(err, fence.ErrSessionClosed) {
		t.Fatalf("Run: %v, want ErrSessionClosed", err)
	}
}

func TestRunStops(t *testing.T) {
	t.Parallel()
	job, err := schedule.New(newSession(t, memory.New(nil), nil), "j", time.Hour, nop, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	stop := errors.New("shutting down")
	cancel(stop)
	if err := job.Run(ctx); !errors.Is(err, stop) {
		t.Fatalf("Run: %v, want the context's cause", err)
	}
}

// newSession returns a session on l with opts.
func newSession(t *testing.T, l *fence.Locker, opts *fence.SessionOptions) *fence.Session {
	t.Helper()
	s, err := fence.NewSession(l, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
