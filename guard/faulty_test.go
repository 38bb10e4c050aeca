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
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
)

// errTransient stands for a store failure whose outcome is unknown, such
// as a dropped connection.
var errTransient = errors.New("injected: connection reset")

// renewFunc replaces one Renew call; real is the memory locker's Renew.
type renewFunc func(ctx context.Context, lease fence.Lease, real func(context.Context, fence.Lease) (fence.Lease, error)) (fence.Lease, error)

// acquireFunc replaces one Acquire call; real is the memory locker's.
type acquireFunc func(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions, real func(context.Context, string, time.Duration, *fence.AcquireOptions) (fence.Lease, error)) (fence.Lease, error)

// faultyLocker wraps a real memory locker and injects failures, hangs and
// ambiguous outcomes into the calls a test chooses. It logs every call.
type faultyLocker struct {
	*memory.Locker
	mu      sync.Mutex
	renews  []renewFunc   // used in turn by the next Renew calls; then pass-through
	renewF  renewFunc     // used when renews is empty; nil = pass-through
	acqs    []acquireFunc // used in turn by the next Acquire calls
	log     []string
	inspect int
}

var _ fence.Locker = (*faultyLocker)(nil)

func (f *faultyLocker) record(s string) {
	f.mu.Lock()
	f.log = append(f.log, s)
	f.mu.Unlock()
}

func (f *faultyLocker) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// setRenew makes every following Renew call use r (nil: pass-through).
func (f *faultyLocker) setRenew(r renewFunc) {
	f.mu.Lock()
	f.renewF = r
	f.mu.Unlock()
}

// queueRenew makes the next Renew calls use rs, one each.
func (f *faultyLocker) queueRenew(rs ...renewFunc) {
	f.mu.Lock()
	f.renews = append(f.renews, rs...)
	f.mu.Unlock()
}

// queueAcquire makes the next Acquire calls use as, one each.
func (f *faultyLocker) queueAcquire(as ...acquireFunc) {
	f.mu.Lock()
	f.acqs = append(f.acqs, as...)
	f.mu.Unlock()
}

func (f *faultyLocker) Acquire(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions) (fence.Lease, error) {
	f.mu.Lock()
	var a acquireFunc
	if len(f.acqs) > 0 {
		a, f.acqs = f.acqs[0], f.acqs[1:]
	}
	f.mu.Unlock()
	var l fence.Lease
	var err error
	if a != nil {
		l, err = a(ctx, key, ttl, opts, f.Locker.Acquire)
	} else {
		l, err = f.Locker.Acquire(ctx, key, ttl, opts)
	}
	f.record(fmt.Sprintf("acquire err=%v", err))
	return l, err
}

func (f *faultyLocker) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	f.mu.Lock()
	r := f.renewF
	if len(f.renews) > 0 {
		r, f.renews = f.renews[0], f.renews[1:]
	}
	f.mu.Unlock()
	var l fence.Lease
	var err error
	if r != nil {
		l, err = r(ctx, lease, f.Locker.Renew)
	} else {
		l, err = f.Locker.Renew(ctx, lease)
	}
	f.record(fmt.Sprintf("renew err=%v", err))
	return l, err
}

func (f *faultyLocker) Release(ctx context.Context, lease fence.Lease) error {
	err := f.Locker.Release(ctx, lease)
	f.record(fmt.Sprintf("release err=%v", err))
	return err
}

func (f *faultyLocker) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	info, err := f.Locker.Inspect(ctx, key)
	f.mu.Lock()
	f.inspect++
	f.mu.Unlock()
	f.record(fmt.Sprintf("inspect held=%v err=%v", info.Held, err))
	return info, err
}

// failRenew fails without reaching the store.
func failRenew(err error) renewFunc {
	return func(context.Context, fence.Lease, func(context.Context, fence.Lease) (fence.Lease, error)) (fence.Lease, error) {
		return fence.Lease{}, err
	}
}

// appliedRenew reaches the store, which renews the lease, then reports a
// timeout as if the answer had been lost.
func appliedRenew(ctx context.Context, l fence.Lease, real func(context.Context, fence.Lease) (fence.Lease, error)) (fence.Lease, error) {
	if _, err := real(ctx, l); err != nil {
		return fence.Lease{}, err
	}
	return fence.Lease{}, fmt.Errorf("renew: %w", context.DeadlineExceeded)
}

// hangRenew signals on entered, then blocks until unblock is closed or the
// call's context is done.
func hangRenew(entered chan<- struct{}, unblock <-chan struct{}) renewFunc {
	return func(ctx context.Context, _ fence.Lease, _ func(context.Context, fence.Lease) (fence.Lease, error)) (fence.Lease, error) {
		entered <- struct{}{}
		select {
		case <-unblock:
			return fence.Lease{}, errTransient
		case <-ctx.Done():
			return fence.Lease{}, ctx.Err()
		}
	}
}

// env is one test's world: a fake clock, a memory locker on it, and the
// fault-injecting wrapper the guard talks to.
type env struct {
	clk    *clocktest.Fake
	mem    *memory.Locker
	locker *faultyLocker
	obs    *recorder
}

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := clocktest.New(epoch)
	mem := memory.New(&memory.Options{Clock: clk})
	return &env{clk: clk, mem: mem, locker: &faultyLocker{Locker: mem}, obs: &recorder{clk: clk}}
}

// guard returns a Guard on e's locker with opts (TTL 30 s unless set), the
// fake clock and a recording observer.
func (e *env) guard(t *testing.T, opts guard.Options) *guard.Guard {
	t.Helper()
	if opts.TTL == 0 {
		opts.TTL = 30 * time.Second
	}
	opts.Clock = e.clk
	opts.Observer = e.obs.observer()
	g, err := guard.New(e.locker, &opts)
	if err != nil {
		t.Fatalf("guard.New: %v", err)
	}
	return g
}

// elapsed is the fake time since the start of the test.
func (e *env) elapsed() time.Duration { return e.clk.Now().Sub(epoch) }

// job is a Do call running on its own goroutine. Its fn hands over its
// context and lease, then waits for finish.
type job struct {
	ctx    context.Context // fn's context, once started is closed
	lease  fence.Lease
	start  chan struct{}
	finish chan func() error
	done   chan struct{}
	err    error
}

// startJob runs g.Do(ctx, key, ...) and waits until fn runs.
func startJob(t *testing.T, ctx context.Context, g *guard.Guard, key string) *job {
	t.Helper()
	j := goJob(ctx, g, key)
	select {
	case <-j.start:
	case <-j.done:
		t.Fatalf("Do returned before running fn: %v", j.err)
	case <-t.Context().Done():
		t.Fatal("fn never started")
	}
	return j
}

// goJob runs g.Do(ctx, key, ...) without waiting for fn: j.start closes
// when it runs.
func goJob(ctx context.Context, g *guard.Guard, key string) *job {
	j := &job{start: make(chan struct{}), finish: make(chan func() error, 1), done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.err = g.Do(ctx, key, func(ctx context.Context, h *fence.Handle) error {
			lease := h.Lease()
			j.ctx, j.lease = ctx, lease
			close(j.start)
			return (<-j.finish)()
		})
	}()
	return j
}

// end makes fn return f() and waits for Do to return its error.
func (j *job) end(t *testing.T, f func() error) error {
	t.Helper()
	j.finish <- f
	select {
	case <-j.done:
		return j.err
	case <-t.Context().Done():
		t.Fatal("Do did not return")
		return nil
	}
}

// waitIdle waits until the renewer has armed both its timers (the safety
// deadline and the next renewal), failing the test if the lease is lost
// meanwhile.
func (e *env) waitIdle(t *testing.T, j *job) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stop := context.AfterFunc(j.ctx, cancel)
	defer stop()
	if err := e.clk.WaitTimers(ctx, 2); err != nil {
		t.Fatalf("renewer not idle: work context: %v, cause %v", j.ctx.Err(), context.Cause(j.ctx))
	}
}

// advanceTo moves the clock to epoch+at in steps of at most step, letting
// the renewer react to each step.
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

// RenewMany renews through f.Renew, so that the session's keepalive meets
// the faults (the embedded locker's RenewMany would bypass them).
func (f *faultyLocker) RenewMany(ctx context.Context, leases []fence.Lease) ([]fence.Lease, []error) {
	return fence.RenewEach(ctx, f, leases)
}
