package schedule_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/internal/testing/faultlock"
	"github.com/fencekit/fence/schedule"
)

// farm is a set of replicas running one Job, each with a session of its
// own over its own faultlock.Locker on a shared store, and a record of
// the runs.
type farm struct {
	t     *testing.T
	name  string
	clock *clocktest.Fake // nil in real-time tests
	reps  []*replica
	// patience bounds waitFor; 30 s unless a test sets it.
	patience time.Duration

	mu       sync.Mutex
	runs     map[time.Time][]run // by window start
	events   []event
	log      []string
	holding  int         // job locks held: Acquired minus Released
	renewals map[int]int // successful renewals of the job lock, per replica
	releases []released
	losses   []lost
	blocked  int // jobs waiting in block for their lease to end
	active   int // Run loops running
}

type run struct {
	id     int
	window time.Time
	lease  fence.Lease // the job lock's lease when the run started
}

// released is a Released event of a replica's Locker.
type released struct {
	id int
	fence.ReleasedEvent
}

// lost is a LeaseLost event of a replica's Locker.
type lost struct {
	id int
	fence.LeaseLostEvent
}

type event struct {
	id int
	schedule.AttemptEvent
}

// replica is one process running the Job.
type replica struct {
	id     int
	job    *schedule.Job
	p      *faultlock.Locker
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// lagClock is a replica's view of a shared fake clock, lag behind it.
type lagClock struct {
	*clocktest.Fake
	lag time.Duration
}

func (c lagClock) Now() time.Time { return c.Fake.Now().Add(-c.lag) }

// newFarm makes a replica on each of lockers, for one Job named after the
// test, each with a session of its own with so. lags[i], if given, is how
// far replica i's clock (its session's) lags behind clock. job is the
// job's work after it is recorded (nil: none). The replicas do not run
// until start.
func newFarm(t *testing.T, lockers []*fence.Locker, clock *clocktest.Fake, lags []time.Duration, interval time.Duration, so fence.SessionOptions, opts schedule.Options, job func(f *farm, r *replica, ctx context.Context, h *fence.Handle) error) *farm {
	t.Helper()
	f := &farm{t: t, name: "job-" + t.Name(), clock: clock, patience: 30 * time.Second, runs: map[time.Time][]run{}, renewals: map[int]int{}}
	for id, l := range lockers {
		r := &replica{id: id, p: faultlock.New(l)}
		o, so := opts, so
		if clock != nil {
			so.Clock = clock
			if id < len(lags) {
				so.Clock = lagClock{clock, lags[id]}
			}
		}
		o.Observer = &schedule.Observer{Attempted: func(e schedule.AttemptEvent) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.events = append(f.events, event{id, e})
			f.note("%d %v %s: %v (token %d) %v", id, f.now(), e.Window.Format(time.TimeOnly), e.Outcome, e.Lease.Token, e.Err)
		}}
		r.p.Locker().SetObserver(&fence.Observer{
			Acquired: func(fence.AcquiredEvent) { f.mu.Lock(); f.holding++; f.mu.Unlock() },
			Renewed: func(e fence.RenewedEvent) {
				f.mu.Lock()
				defer f.mu.Unlock()
				if e.Err != nil {
					f.note("%d %v renewal failed (token %d): %v", id, f.now(), e.Lease.Token, e.Err)
					return
				}
				f.renewals[id]++
			},
			LeaseLost: func(e fence.LeaseLostEvent) {
				f.mu.Lock()
				defer f.mu.Unlock()
				f.note("%d %v lost token %d: %v", id, f.now(), e.Lease.Token, e.Cause)
				f.losses = append(f.losses, lost{id, e})
			},
			Released: func(e fence.ReleasedEvent) {
				f.mu.Lock()
				defer f.mu.Unlock()
				f.holding--
				f.note("%d %v released token %d after %v: %v", id, f.now(), e.Lease.Token, e.Held, e.Err)
				f.releases = append(f.releases, released{id, e})
			},
		})
		sess, err := fence.NewSession(r.p.Locker(), &so)
		if err != nil {
			t.Fatalf("NewSession: %v", err)
		}
		fn := func(ctx context.Context, window time.Time, h *fence.Handle) error {
			f.mu.Lock()
			f.runs[window] = append(f.runs[window], run{id, window, h.Lease()})
			f.mu.Unlock()
			if job == nil {
				return nil
			}
			return job(f, r, ctx, h)
		}
		j, err := schedule.New(sess, f.name, interval, fn, &o)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		r.job = j
		f.reps = append(f.reps, r)
	}
	t.Cleanup(f.stopAll)
	return f
}

// now is the shared clock's time for the log, or the real time.
func (f *farm) now() string {
	if f.clock != nil {
		return f.clock.Now().Format(time.TimeOnly)
	}
	return time.Now().Format("15:04:05.000")
}

func (f *farm) note(format string, args ...any) {
	f.log = append(f.log, fmt.Sprintf(format, args...))
}

// start runs every replica's Run loop on a goroutine of its own.
func (f *farm) start() {
	for _, r := range f.reps {
		ctx, cancel := context.WithCancel(context.Background())
		r.cancel, r.done = cancel, make(chan struct{})
		f.mu.Lock()
		f.active++
		f.mu.Unlock()
		go func() {
			err := r.job.Run(ctx)
			f.mu.Lock()
			f.active--
			f.mu.Unlock()
			r.err = err
			close(r.done)
		}()
	}
}

func (f *farm) stopAll() {
	for _, r := range f.reps {
		if r.cancel != nil {
			r.cancel()
		}
	}
	for _, r := range f.reps {
		if r.done == nil {
			continue
		}
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			f.t.Errorf("replica %d: Run did not return after its context ended", r.id)
		}
	}
}

// block is a job that waits until its lease ends, counted for settle.
func (f *farm) block(ctx context.Context) error {
	f.mu.Lock()
	f.blocked++
	f.mu.Unlock()
	<-ctx.Done()
	f.mu.Lock()
	f.blocked--
	f.mu.Unlock()
	return context.Cause(ctx)
}

// history returns the attempts so far, for failure messages.
func (f *farm) history() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return "attempts:\n  " + strings.Join(f.log, "\n  ")
}

// runsOf returns the runs of window.
func (f *farm) runsOf(window time.Time) []run {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]run(nil), f.runs[window]...)
}

// windows returns the windows that ran, in order.
func (f *farm) windows() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ws []time.Time
	for w := range f.runs {
		ws = append(ws, w)
	}
	for i := 1; i < len(ws); i++ {
		for k := i; k > 0 && ws[k].Before(ws[k-1]); k-- {
			ws[k], ws[k-1] = ws[k-1], ws[k]
		}
	}
	return ws
}

// attemptsOf returns replica id's attempts at window.
func (f *farm) attemptsOf(id int, window time.Time) []schedule.AttemptEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []schedule.AttemptEvent
	for _, e := range f.events {
		if e.id == id && e.Window.Equal(window) {
			out = append(out, e.AttemptEvent)
		}
	}
	return out
}

// releasesOf returns replica id's releases of the job lock.
func (f *farm) releasesOf(id int) []fence.ReleasedEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fence.ReleasedEvent
	for _, r := range f.releases {
		if r.id == id {
			out = append(out, r.ReleasedEvent)
		}
	}
	return out
}

// allLosses returns the job leases reported lost, on any replica.
func (f *farm) allLosses() []lost {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]lost(nil), f.losses...)
}

// renewalsOf returns how many times replica id renewed the job lock.
func (f *farm) renewalsOf(id int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.renewals[id]
}

// eventsOf returns all of replica id's attempts.
func (f *farm) eventsOf(id int) []schedule.AttemptEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []schedule.AttemptEvent
	for _, e := range f.events {
		if e.id == id {
			out = append(out, e.AttemptEvent)
		}
	}
	return out
}

// checkAtMostOnce fails the test if a window ran twice, or a run's token
// was not above every earlier run's.
func (f *farm) checkAtMostOnce() {
	f.t.Helper()
	var last fence.Token
	for _, w := range f.windows() {
		rs := f.runsOf(w)
		if len(rs) != 1 {
			f.t.Fatalf("window %v ran %d times: %+v\n%s", w, len(rs), rs, f.history())
		}
		if rs[0].lease.Token <= last {
			f.t.Fatalf("window %v ran with token %d, not above %d\n%s", w, rs[0].lease.Token, last, f.history())
		}
		last = rs[0].lease.Token
	}
}

// settle waits until every Run loop is parked on the fake clock: an idle
// loop waits on one timer; a replica holding the job lock waits on three
// (the hold, and its session keepalive's next renewal and safety
// deadline), or on two while its job waits in block.
func (f *farm) settle() {
	f.t.Helper()
	giveUp := time.Now().Add(20 * time.Second)
	for {
		f.mu.Lock()
		want := f.active + 2*f.holding - f.blocked
		f.mu.Unlock()
		if f.clock.Timers() == want {
			return
		}
		if time.Now().After(giveUp) {
			f.t.Fatalf("replicas did not settle: %d timers, want %d\n%s", f.clock.Timers(), want, f.history())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// advance moves the fake clock by d in steps of step, letting the
// replicas react after each.
func (f *farm) advance(d, step time.Duration) {
	f.t.Helper()
	f.settle()
	for range int(d / step) {
		f.clock.Advance(step)
		f.settle()
	}
}

// waitFor polls cond in real time, for tests on a real clock.
func (f *farm) waitFor(what string, cond func() bool) {
	f.t.Helper()
	giveUp := time.Now().Add(f.patience)
	for !cond() {
		if time.Now().After(giveUp) {
			f.t.Fatalf("%s: not within %v\n%s", what, f.patience, f.history())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
