package guard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
)

// errTransient stands for a store failure whose outcome is unknown, such
// as a dropped connection.
var errTransient = errors.New("injected: connection reset")

// renewFunc replaces one Renew call of the driver; real is the memory
// driver's Renew.
type renewFunc func(ctx context.Context, lease fence.Lease, real func(context.Context, fence.Lease) error) error

// acquireFunc replaces one Acquire call of the driver; real is the memory
// driver's.
type acquireFunc func(ctx context.Context, key, owner string, ttl time.Duration, real func(context.Context, string, string, time.Duration) (fence.Lease, error)) (fence.Lease, error)

// faultyDriver wraps the memory driver and injects failures, hangs and
// ambiguous outcomes into the calls a test chooses. It logs every call.
// It passes release notifications on, and renews one lease per call.
type faultyDriver struct {
	d       driver.Locker
	mu      sync.Mutex
	renews  []renewFunc   // used in turn by the next Renew calls; then pass-through
	renewF  renewFunc     // used when renews is empty; nil = pass-through
	acqs    []acquireFunc // used in turn by the next Acquire calls
	log     []string
	inspect int
}

var _ driver.ReleaseNotifier = (*faultyDriver)(nil)

func (f *faultyDriver) record(s string) {
	f.mu.Lock()
	f.log = append(f.log, s)
	f.mu.Unlock()
}

func (f *faultyDriver) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// setRenew makes every following Renew call use r (nil: pass-through).
func (f *faultyDriver) setRenew(r renewFunc) {
	f.mu.Lock()
	f.renewF = r
	f.mu.Unlock()
}

// queueRenew makes the next Renew calls use rs, one each.
func (f *faultyDriver) queueRenew(rs ...renewFunc) {
	f.mu.Lock()
	f.renews = append(f.renews, rs...)
	f.mu.Unlock()
}

// queueAcquire makes the next Acquire calls use as, one each.
func (f *faultyDriver) queueAcquire(as ...acquireFunc) {
	f.mu.Lock()
	f.acqs = append(f.acqs, as...)
	f.mu.Unlock()
}

func (f *faultyDriver) Info() driver.Info { return f.d.Info() }

func (f *faultyDriver) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	f.mu.Lock()
	var a acquireFunc
	if len(f.acqs) > 0 {
		a, f.acqs = f.acqs[0], f.acqs[1:]
	}
	f.mu.Unlock()
	var l fence.Lease
	var err error
	if a != nil {
		l, err = a(ctx, key, owner, ttl, f.d.Acquire)
	} else {
		l, err = f.d.Acquire(ctx, key, owner, ttl)
	}
	f.record(fmt.Sprintf("acquire err=%v", err))
	return l, err
}

func (f *faultyDriver) Renew(ctx context.Context, lease fence.Lease) error {
	f.mu.Lock()
	r := f.renewF
	if len(f.renews) > 0 {
		r, f.renews = f.renews[0], f.renews[1:]
	}
	f.mu.Unlock()
	var err error
	if r != nil {
		err = r(ctx, lease, f.d.Renew)
	} else {
		err = f.d.Renew(ctx, lease)
	}
	f.record(fmt.Sprintf("renew err=%v", err))
	return err
}

func (f *faultyDriver) Release(ctx context.Context, lease fence.Lease) error {
	err := f.d.Release(ctx, lease)
	f.record(fmt.Sprintf("release err=%v", err))
	return err
}

func (f *faultyDriver) Break(ctx context.Context, key string) error { return f.d.Break(ctx, key) }

func (f *faultyDriver) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	info, err := f.d.Inspect(ctx, key)
	f.mu.Lock()
	f.inspect++
	f.mu.Unlock()
	f.record(fmt.Sprintf("inspect held=%v err=%v", info.Held, err))
	return info, err
}

// NotifyRelease passes on the memory driver's notifications, so that a
// waiting Lock wakes as it would on the memory locker itself.
func (f *faultyDriver) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return f.d.(driver.ReleaseNotifier).NotifyRelease(ctx, key)
}

// failRenew fails without reaching the store.
func failRenew(err error) renewFunc {
	return func(context.Context, fence.Lease, func(context.Context, fence.Lease) error) error {
		return err
	}
}

// appliedRenew reaches the store, which renews the lease, then reports a
// timeout as if the answer had been lost.
func appliedRenew(ctx context.Context, l fence.Lease, real func(context.Context, fence.Lease) error) error {
	if err := real(ctx, l); err != nil {
		return err
	}
	return fmt.Errorf("renew: %w", context.DeadlineExceeded)
}

// hangRenew signals on entered, then blocks until unblock is closed or the
// call's context is done.
func hangRenew(entered chan<- struct{}, unblock <-chan struct{}) renewFunc {
	return func(ctx context.Context, _ fence.Lease, _ func(context.Context, fence.Lease) error) error {
		entered <- struct{}{}
		select {
		case <-unblock:
			return errTransient
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// env is one test's world: a fake clock, a memory locker on it, and a
// Locker over the fault-injecting driver, which the sessions of the test
// use, with a recording observer.
type env struct {
	clk    *clocktest.Fake
	mem    *fence.Locker // the memory locker, for the test's own calls
	fault  *faultyDriver // the memory driver, with faults
	locker *fence.Locker // over fault
	obs    *recorder
}

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := clocktest.New(epoch)
	mem := memory.New(&memory.Options{Clock: clk})
	e := &env{clk: clk, mem: mem, obs: &recorder{clk: clk}}
	l, err := driver.Wrap(mem, func(d driver.Locker) driver.Locker {
		e.fault = &faultyDriver{d: d}
		return e.fault
	})
	if err != nil {
		t.Fatal(err)
	}
	l.SetObserver(e.obs.observer())
	e.locker = l
	return e
}

// runner runs functions under leases through one session, with one
// LockOptions.
type runner struct {
	s    *fence.Session
	opts *fence.LockOptions
}

// Run is guard.Run through r's session.
func (r runner) Run(ctx context.Context, key string, fn guard.Func) error {
	return guard.Run(ctx, r.s, key, fn, r.opts)
}

// guard returns a runner over a session on e's locker with opts (TTL
// 30 s unless set, and the fake clock), that waits up to wait (0: tries
// once).
func (e *env) guard(t *testing.T, opts fence.SessionOptions, wait time.Duration) runner {
	t.Helper()
	if opts.TTL == 0 {
		opts.TTL = 30 * time.Second
	}
	opts.Clock = e.clk
	s, err := fence.NewSession(e.locker, &opts)
	if err != nil {
		t.Fatalf("fence.NewSession: %v", err)
	}
	return runner{s: s, opts: &fence.LockOptions{Wait: wait}}
}

// elapsed is the fake time since the start of the test.
func (e *env) elapsed() time.Duration { return e.clk.Now().Sub(epoch) }

// job is a guard.Run call running on its own goroutine. Its fn hands over its
// context and lease, then waits for finish.
type job struct {
	ctx    context.Context // fn's context, once started is closed
	lease  fence.Lease
	start  chan struct{}
	finish chan func() error
	done   chan struct{}
	err    error
}

// startJob runs g.Run(ctx, key, ...) and waits until fn runs.
func startJob(t *testing.T, ctx context.Context, g runner, key string) *job {
	t.Helper()
	j := goJob(ctx, g, key)
	select {
	case <-j.start:
	case <-j.done:
		t.Fatalf("Run returned before running fn: %v", j.err)
	case <-t.Context().Done():
		t.Fatal("fn never started")
	}
	return j
}

// goJob runs g.Run(ctx, key, ...) without waiting for fn: j.start closes
// when it runs.
func goJob(ctx context.Context, g runner, key string) *job {
	j := &job{start: make(chan struct{}), finish: make(chan func() error, 1), done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.err = g.Run(ctx, key, func(ctx context.Context, h *fence.Handle) error {
			lease := h.Lease()
			j.ctx, j.lease = ctx, lease
			close(j.start)
			return (<-j.finish)()
		})
	}()
	return j
}

// end makes fn return f() and waits for Run to return its error.
func (j *job) end(t *testing.T, f func() error) error {
	t.Helper()
	j.finish <- f
	select {
	case <-j.done:
		return j.err
	case <-t.Context().Done():
		t.Fatal("Run did not return")
		return nil
	}
}

// waitIdle waits until the session's keepalive has armed both its timers
// (the safety deadline and the next renewal), failing the test if the
// lease is lost meanwhile.
func (e *env) waitIdle(t *testing.T, j *job) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stop := context.AfterFunc(j.ctx, cancel)
	defer stop()
	if err := e.clk.WaitTimers(ctx, 2); err != nil {
		t.Fatalf("keepalive not idle: work context: %v, cause %v", j.ctx.Err(), context.Cause(j.ctx))
	}
}

// advanceTo moves the clock to epoch+at in steps of at most step, letting
// the keepalive react to each step.
func (e *env) advanceTo(t *testing.T, j *job, at, step time.Duration) {
	t.Helper()
	for {
		e.waitIdle(t, j)
		left := at - e.elapsed()
		if left <= 0 {
			return
		}
		e.clk.Advance(min(left, step))
	}
}

// waitLost waits until fn's context is cancelled and returns the cause.
func waitLost(t *testing.T, j *job) error {
	t.Helper()
	select {
	case <-j.ctx.Done():
		return context.Cause(j.ctx)
	case <-t.Context().Done():
		t.Fatal("work context not cancelled")
		return nil
	}
}
