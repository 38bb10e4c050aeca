package fenceotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
)

// An operator breaks the lock while work runs; a new holder writes; the
// next renewal finds the lease gone and cancels the work, whose late write
// the resource refuses as stale.
func TestBreakWhileWorkRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	ctx := t.Context()
	j := startJob(t, e.session(t), "acct")
	if err := e.res.Put(ctx, "acct", j.h.Token(), []byte("a1")); err != nil {
		t.Fatal(err)
	}
	e.waitIdle(t)
	if err := e.locker.Break(ctx, "acct"); err != nil {
		t.Fatal(err)
	}
	next, err := e.locker.Acquire(ctx, "acct", time.Minute, &fence.AcquireOptions{Owner: "second-holder-owner"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.res.Put(ctx, "acct", next.Token, []byte("b")); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(interval) // the renewal finds the lease gone
	<-j.ctx.Done()
	if !errors.Is(context.Cause(j.ctx), fence.ErrLeaseLost) {
		t.Fatalf("work cancelled with %v, want a lost lease", context.Cause(j.ctx))
	}
	err = j.end(func(_ context.Context, h *fence.Handle) error {
		return e.res.Put(context.WithoutCancel(ctx), "acct", h.Token(), []byte("a2"))
	})
	if !errors.Is(err, fence.ErrLeaseLost) || !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("work: %v, want lease lost and a stale write", err)
	}

	rm := e.collect(t)
	checks := []struct {
		name string
		got  int64
		want int64
	}{
		{"lost{not_held}", count(t, rm, fenceotel.MetricLost, str("fence.reason", "not_held")), 1},
		{"lost", count(t, rm, fenceotel.MetricLost), 1},
		{"renewals{not_held}", count(t, rm, fenceotel.MetricRenewals, str("fence.outcome", "not_held")), 1},
		{"renewals{renewed}", count(t, rm, fenceotel.MetricRenewals, str("fence.outcome", "renewed")), 0},
		{"held", count(t, rm, fenceotel.MetricHeld), 0},
		{"writes{memory,put,accepted}", count(t, rm, fenceotel.MetricResourceWrites,
			str("fence.backend", "memory"), str("fence.operation", "put"), str("fence.outcome", "accepted")), 2},
		{"writes{memory,put,stale}", count(t, rm, fenceotel.MetricResourceWrites,
			str("fence.backend", "memory"), str("fence.operation", "put"), str("fence.outcome", "stale")), 1},
		{"writes{error}", count(t, rm, fenceotel.MetricResourceWrites, str("fence.outcome", "error")), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if n, sum := histogram(t, rm, fenceotel.MetricHoldDuration, str("fence.outcome", "not_held")); n != 1 || sum != interval.Seconds() {
		t.Errorf("hold duration{not_held}: %d samples summing %vs, want 1 of %vs", n, sum, interval.Seconds())
	}

	// Spans.
	puts := e.spansNamed("fence.resource.put")
	if len(puts) != 3 {
		t.Fatalf("%d put spans, want 3", len(puts))
	}
	stale := puts[2]
	wantAttrs := map[string]string{
		"fence.backend": "memory", "fence.resource.key": "acct", "fence.outcome": "stale",
		"fence.token": j.h.Token().String(), "fence.token.highest": next.Token.String(),
	}
	for k, want := range wantAttrs {
		if v, ok := attr(stale, k); !ok || v.Emit() != want {
			t.Errorf("stale put span %s = %q, want %q", k, v.Emit(), want)
		}
	}
	if st := stale.Status(); st.Code != codes.Error || !strings.Contains(st.Description, "stale token") {
		t.Errorf("stale put span status %+v, want an error naming the stale token", st)
	}
	if ev := stale.Events(); len(ev) != 1 || ev[0].Name != "exception" {
		t.Errorf("stale put span events %+v, want one exception", ev)
	}
	if st := puts[0].Status(); st.Code != codes.Unset {
		t.Errorf("accepted put span status %+v, want unset", st)
	}
	spanOutcomes := []struct{ span, outcome string }{
		{"fence.lock.break", "broken"},
		{"fence.lock.renew", "not_held"},
		{"fence.lock.release", "not_held"},
	}
	for _, c := range spanOutcomes {
		s := e.spansNamed(c.span)
		if len(s) != 1 {
			t.Errorf("%d %s spans, want 1", len(s), c.span)
			continue
		}
		if v, _ := attr(s[0], "fence.outcome"); v.AsString() != c.outcome {
			t.Errorf("%s outcome %q, want %q", c.span, v.AsString(), c.outcome)
		}
		if v, _ := attr(s[0], "fence.key"); v.AsString() != "acct" {
			t.Errorf("%s key %q, want acct", c.span, v.AsString())
		}
	}

	// Logs.
	logs := e.logs.String()
	for _, want := range []string{
		`level=INFO msg="fence: lock broken" key=acct`,
		`level=WARN msg="fence: renew failed" key=acct token=1`,
		`level=ERROR msg="fence: lease lost" key=acct token=1 reason=not_held`,
		`level=WARN msg="fence: stale write refused" backend=memory name=acct token=1 operation=put highest=2`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	for _, owner := range []string{j.h.Lease().Owner, next.Owner} {
		if strings.Contains(logs, owner) {
			t.Errorf("logs carry owner id %q:\n%s", owner, logs)
		}
	}
}

var errTransient = errors.New("store: connection reset")

// Each way of losing a lease is counted under its reason.
func TestLossReasons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reason string
		// lose makes the running job lose its lease; the renewer is
		// idle when it is called.
		lose         func(t *testing.T, e *env, j *job)
		renewOutcome string // of the counted renewal, "" for none
	}{
		{name: "broken", reason: "not_held", renewOutcome: "not_held", lose: func(t *testing.T, e *env, j *job) {
			if err := e.mem.Break(t.Context(), "job"); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(interval)
		}},
		{name: "renewal hangs past the deadline", reason: "deadline", lose: func(t *testing.T, e *env, j *job) {
			entered, unblock := make(chan struct{}), make(chan struct{})
			e.faults.setRenew(func(ctx context.Context, _ fence.Lease) error {
				close(entered)
				select {
				case <-unblock:
				case <-ctx.Done():
				}
				return errTransient
			})
			e.clk.Advance(interval)
			<-entered
			e.clk.Advance(deadline - interval)
			<-j.ctx.Done()
			close(unblock)
		}},
		{name: "ambiguous renewal, then another holder", reason: "reconcile", renewOutcome: "error", lose: func(t *testing.T, e *env, j *job) {
			e.faults.setRenew(func(ctx context.Context, l fence.Lease) error {
				// The answer is lost while an operator breaks the
				// lock and another owner takes it.
				if err := e.mem.Break(ctx, l.Key); err != nil {
					return err
				}
				if _, err := e.mem.Acquire(ctx, l.Key, time.Minute, &fence.AcquireOptions{Owner: "other-owner-7f3a"}); err != nil {
					return err
				}
				return errTransient
			})
			e.clk.Advance(interval)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fenceotel.Options{})
			j := startJob(t, e.session(t), "job")
			e.waitIdle(t)
			tc.lose(t, e, j)
			<-j.ctx.Done()
			if err := j.end(func(context.Context, *fence.Handle) error { return nil }); !errors.Is(err, fence.ErrLeaseLost) {
				t.Fatalf("work: %v, want lease lost", err)
			}
			rm := e.collect(t)
			for _, reason := range []string{"not_held", "deadline", "reconcile", "error"} {
				want := int64(0)
				if reason == tc.reason {
					want = 1
				}
				if got := count(t, rm, fenceotel.MetricLost, str("fence.reason", reason)); got != want {
					t.Errorf("lost{reason=%s} = %d, want %d", reason, got, want)
				}
			}
			var renewals int64
			if tc.renewOutcome != "" {
				renewals = 1
				if got := count(t, rm, fenceotel.MetricRenewals, str("fence.outcome", tc.renewOutcome)); got != 1 {
					t.Errorf("renewals{%s} = %d, want 1", tc.renewOutcome, got)
				}
			}
			if tc.renewOutcome != "" || hasMetric(rm, fenceotel.MetricRenewals) {
				if got := count(t, rm, fenceotel.MetricRenewals); got != renewals {
					t.Errorf("renewals = %d, want %d", got, renewals)
				}
			}
			if got := count(t, rm, fenceotel.MetricHeld); got != 0 {
				t.Errorf("held = %d after the release, want 0", got)
			}
			logs := e.logs.String()
			if want := `msg="fence: lease lost" key=job token=1 reason=` + tc.reason; !strings.Contains(logs, want) {
				t.Errorf("logs lack %q:\n%s", want, logs)
			}
			for _, owner := range []string{j.h.Lease().Owner, "other-owner-7f3a"} {
				if strings.Contains(logs, owner) {
					t.Errorf("logs carry owner id %q:\n%s", owner, logs)
				}
				for _, s := range e.spans.Ended() {
					if strings.Contains(s.Status().Description, owner) {
						t.Errorf("span %s status carries owner id %q", s.Name(), owner)
					}
				}
			}
		})
	}
}
