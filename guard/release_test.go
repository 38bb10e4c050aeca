package guard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fencekit/fence"
)

func TestReleases(t *testing.T) {
	t.Parallel()
	errJob := errors.New("job failed")
	tests := []struct {
		name    string
		fn      func(ctx context.Context, cancel context.CancelFunc) error
		wantErr error // nil: Run returns nil
		panics  bool
	}{
		{name: "on return", fn: func(context.Context, context.CancelFunc) error { return nil }},
		{name: "on fn error", fn: func(context.Context, context.CancelFunc) error { return errJob }, wantErr: errJob},
		{name: "on panic", fn: func(context.Context, context.CancelFunc) error { panic(errJob) }, panics: true},
		{name: "when the caller's ctx is cancelled", fn: func(ctx context.Context, cancel context.CancelFunc) error {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		}, wantErr: context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			g := e.guard(t, fence.SessionOptions{}, 0)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var lease fence.Lease
			var recovered any
			err := func() (err error) {
				defer func() { recovered = recover() }()
				return g.Run(ctx, "job", func(ctx context.Context, h *fence.Handle) error {
					l := h.Lease()
					lease = l
					return tc.fn(ctx, cancel)
				})
			}()
			if tc.panics {
				if recovered != errJob {
					t.Fatalf("recovered %v, want fn's panic %v to continue after the release", recovered, errJob)
				}
			} else if recovered != nil {
				t.Fatalf("unexpected panic %v", recovered)
			}
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("Run: %v, want nil", err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("Run: %v, want %v", err, tc.wantErr)
			case errors.Is(err, fence.ErrLeaseLost):
				t.Fatalf("Run: %v reports a lost lease", err)
			}
			info, ierr := e.mem.Inspect(t.Context(), "job")
			if ierr != nil || info.Held || info.Token != lease.Token {
				t.Errorf("after Run: %+v, %v; want lease token %d released", info, ierr, lease.Token)
			}
			ev := e.obs.list()
			if last := ev[len(ev)-1]; last != "released held=0s err=<nil>" {
				t.Errorf("last event %q, want a successful release", last)
			}
		})
	}
}

// fn's error and the loss are both reported when the lease was lost and fn
// failed for its own reason.
func TestLostAndFnError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	j := startJob(t, t.Context(), e.guard(t, fence.SessionOptions{TTL: ttl}, 0), "job")
	e.waitIdle(t, j)
	if err := e.mem.Break(t.Context(), "job"); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(interval)
	waitLost(t, j)
	errJob := errors.New("job failed")
	err := j.end(t, func() error { return errJob })
	if !errors.Is(err, errJob) || !errors.Is(err, fence.ErrLeaseLost) {
		t.Fatalf("Run: %v, want both fn's error and ErrLeaseLost", err)
	}
}

// A lease found gone only at release time, with no loss seen before, is
// reported as lost: the work may have run without it.
func TestReleaseRevealsLoss(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.guard(t, fence.SessionOptions{}, 0)
	err := g.Run(t.Context(), "job", func(ctx context.Context, _ *fence.Handle) error {
		return e.mem.Break(ctx, "job")
	})
	if !errors.Is(err, fence.ErrLeaseLost) || !errors.Is(err, fence.ErrNotHeld) {
		t.Fatalf("Run: %v, want ErrLeaseLost wrapping ErrNotHeld", err)
	}
}

func TestRunRejectsNilFn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.guard(t, fence.SessionOptions{}, 0).Run(t.Context(), "job", nil); !errors.Is(err, fence.ErrInvalid) {
		t.Fatalf("Run(nil fn): %v, want ErrInvalid", err)
	}
}

func TestRunWithDoneContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := e.guard(t, fence.SessionOptions{}, 1).Run(ctx, "job", func(context.Context, *fence.Handle) error {
		t.Error("fn ran with a done context")
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
}
