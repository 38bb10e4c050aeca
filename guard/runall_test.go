package guard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/guard"
)

// allJob is a guard.RunAll call running on its own goroutine: its fn hands
// over its context and handles, then waits for finish.
type allJob struct {
	ctx    context.Context
	hs     []*fence.Handle
	start  chan struct{}
	finish chan func() error
	done   chan struct{}
	err    error
}

// startAll runs guard.RunAll(ctx, s, keys, ...) and waits until fn runs.
func startAll(t *testing.T, s *fence.Session, keys []string) *allJob {
	t.Helper()
	j := &allJob{start: make(chan struct{}), finish: make(chan func() error, 1), done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.err = guard.RunAll(t.Context(), s, keys, func(ctx context.Context, hs []*fence.Handle) error {
			j.ctx, j.hs = ctx, hs
			close(j.start)
			return (<-j.finish)()
		}, nil)
	}()
	select {
	case <-j.start:
	case <-j.done:
		t.Fatalf("RunAll returned before running fn: %v", j.err)
	}
	return j
}

// end makes fn return f() and waits for RunAll's error.
func (j *allJob) end(f func() error) error {
	j.finish <- f
	<-j.done
	return j.err
}

// sessionPaths are the two ways a session takes several keys: the memory
// driver's one atomic operation, and one key at a time in order (the
// fault-injecting wrapper has no driver.MultiAcquirer).
var sessionPaths = []struct {
	name   string
	locker func(e *env) *fence.Locker
}{
	{"atomic", func(e *env) *fence.Locker { return e.mem }},
	{"in-order", func(e *env) *fence.Locker { return e.locker }},
}

func (e *env) session(t *testing.T, l *fence.Locker) *fence.Session {
	t.Helper()
	s, err := fence.NewSession(l, &fence.SessionOptions{TTL: ttl, Clock: e.clk})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A loss of any one lease cancels fn's context with that lease's
// *fence.LeaseLostError; RunAll reports every lease lost, and releases the
// others, which are free at once.
func TestRunAllLossCancelsWork(t *testing.T) {
	t.Parallel()
	for _, p := range sessionPaths {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			keys := []string{"c", "a", "d", "b"}
			j := startAll(t, e.session(t, p.locker(e)), keys)
			for i, h := range j.hs {
				if h.Key() != keys[i] {
					t.Fatalf("handle %d is on %q; want the order of keys %q", i, h.Key(), keys)
				}
			}
			if err := e.clk.WaitTimers(t.Context(), 2); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(interval) // one renewal of them all
			if err := e.clk.WaitTimers(t.Context(), 2); err != nil {
				t.Fatal(err)
			}
			if j.ctx.Err() != nil {
				t.Fatalf("work cancelled by a renewal that succeeded: %v", context.Cause(j.ctx))
			}
			for _, k := range []string{"a", "d"} {
				if err := e.mem.Break(t.Context(), k); err != nil {
					t.Fatal(err)
				}
			}
			e.clk.Advance(interval) // the next renewal finds a and d gone
			select {
			case <-j.ctx.Done():
			case <-time.After(time.Minute): // real time: a bound on a hang, not a timed assert
				t.Fatal("work not cancelled after the loss of a and d")
			}
			cause := context.Cause(j.ctx)
			lost, ok := errors.AsType[*fence.LeaseLostError](cause)
			if !ok || (lost.Key != "a" && lost.Key != "d") {
				t.Fatalf("work's cause %v; want the *fence.LeaseLostError of a or d", cause)
			}
			err := j.end(func() error { return cause })
			if !errors.Is(err, fence.ErrLeaseLost) {
				t.Fatalf("RunAll: %v; want ErrLeaseLost", err)
			}
			joined, ok := err.(interface{ Unwrap() []error })
			if !ok || len(joined.Unwrap()) != 2 {
				t.Fatalf("RunAll: %v; want fn's error and the other loss, joined", err)
			}
			for _, h := range j.hs {
				if h.Key() == "a" || h.Key() == "d" {
					if !errors.Is(h.Err(), fence.ErrLeaseLost) {
						t.Errorf("%s: %v; want lost", h.Key(), h.Err())
					}
					continue
				}
				if !errors.Is(h.Err(), fence.ErrReleased) {
					t.Errorf("%s: %v; want released", h.Key(), h.Err())
				}
				if _, err := e.mem.Acquire(t.Context(), h.Key(), ttl, nil); err != nil {
					t.Errorf("%s after RunAll: %v; want it free", h.Key(), err)
				}
			}
		})
	}
}

// A busy key: RunAll returns ErrHeld naming it, runs nothing and holds
// nothing.
func TestRunAllBusyRunsNothing(t *testing.T) {
	t.Parallel()
	for _, p := range sessionPaths {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if _, err := e.mem.Acquire(t.Context(), "b", ttl, nil); err != nil {
				t.Fatal(err)
			}
			ran := false
			err := guard.RunAll(t.Context(), e.session(t, p.locker(e)), []string{"a", "b", "c"}, func(context.Context, []*fence.Handle) error {
				ran = true
				return nil
			}, nil)
			if he, ok := errors.AsType[*fence.HeldError](err); !ok || he.Key != "b" {
				t.Fatalf("RunAll with b held: %v; want a *fence.HeldError on b", err)
			}
			if ran {
				t.Error("fn ran")
			}
			for _, k := range []string{"a", "c"} {
				if info, err := e.mem.Inspect(t.Context(), k); err != nil || info.Held {
					t.Errorf("%s after a refused RunAll: %+v, %v; want free", k, info, err)
				}
			}
		})
	}
}

// Every key is released when fn returns, fails or panics; the panic
// continues after the releases, and fn's error comes back as it is.
func TestRunAllReleases(t *testing.T) {
	t.Parallel()
	errJob := errors.New("job failed")
	tests := []struct {
		name    string
		fn      func() error
		wantErr error
		panics  bool
	}{
		{name: "on return", fn: func() error { return nil }},
		{name: "on fn error", fn: func() error { return errJob }, wantErr: errJob},
		{name: "on panic", fn: func() error { panic(errJob) }, panics: true},
	}
	for _, tc := range tests {
		for _, p := range sessionPaths {
			t.Run(tc.name+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				keys := []string{"x", "y"}
				var recovered any
				var ctx context.Context
				err := func() error {
					defer func() { recovered = recover() }()
					return guard.RunAll(t.Context(), e.session(t, p.locker(e)), keys, func(c context.Context, hs []*fence.Handle) error {
						ctx = c
						return tc.fn()
					}, nil)
				}()
				if tc.panics != (recovered != nil) {
					t.Fatalf("recovered %v; want a panic: %v", recovered, tc.panics)
				}
				if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
					t.Fatalf("RunAll: %v; want %v", err, tc.wantErr)
				}
				if ctx.Err() == nil {
					t.Error("fn's context still live after RunAll returned")
				}
				for _, k := range keys {
					if _, err := e.mem.Acquire(t.Context(), k, ttl, nil); err != nil {
						t.Errorf("%s after RunAll: %v; want it free", k, err)
					}
				}
			})
		}
	}
}

func TestRunAllRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t, e.mem)
	fn := func(context.Context, []*fence.Handle) error { return nil }
	tests := []struct {
		name string
		s    *fence.Session
		keys []string
		fn   guard.AllFunc
	}{
		{"nil session", nil, []string{"a", "b"}, fn},
		{"nil fn", s, []string{"a", "b"}, nil},
		{"no key", s, nil, fn},
		{"a key twice", s, []string{"a", "b", "a"}, fn},
		{"an empty key", s, []string{"a", ""}, fn},
	}
	for _, tc := range tests {
		if err := guard.RunAll(t.Context(), tc.s, tc.keys, tc.fn, nil); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s: %v; want ErrInvalid", tc.name, err)
		}
	}
	if info, err := e.mem.Inspect(t.Context(), "a"); err != nil || info.Token != 0 {
		t.Errorf("a after refused calls: %+v, %v; want never taken", info, err)
	}
}
