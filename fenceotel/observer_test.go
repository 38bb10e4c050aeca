package fenceotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
)

// A lease taken, renewed twice and released, with a busy attempt by a
// second caller meanwhile.
func TestSessionMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	s := e.session(t)
	j := startJob(t, s, "acct-1")
	if _, err := s.Lock(t.Context(), "acct-1", nil); !errors.Is(err, fence.ErrHeld) {
		t.Fatalf("second Lock: %v, want ErrHeld", err)
	}
	if n := count(t, e.collect(t), fenceotel.MetricHeld); n != 1 {
		t.Errorf("%s = %d while the work runs, want 1", fenceotel.MetricHeld, n)
	}
	for range 2 {
		e.waitIdle(t)
		e.clk.Advance(interval)
	}
	e.waitIdle(t)
	if err := j.end(func(context.Context, *fence.Handle) error { return nil }); err != nil {
		t.Fatalf("Do: %v", err)
	}
	rm := e.collect(t)

	counts := []struct {
		name string
		attr []attribute.KeyValue
		want int64
	}{
		{fenceotel.MetricAcquireAttempts, []attribute.KeyValue{str("fence.outcome", "acquired")}, 1},
		{fenceotel.MetricAcquireAttempts, []attribute.KeyValue{str("fence.outcome", "busy")}, 1},
		{fenceotel.MetricAcquireAttempts, []attribute.KeyValue{str("fence.outcome", "error")}, 0},
		{fenceotel.MetricRenewals, []attribute.KeyValue{str("fence.outcome", "renewed")}, 2},
		{fenceotel.MetricRenewals, nil, 2},
		{fenceotel.MetricHeld, nil, 0},
	}
	for _, c := range counts {
		if got := count(t, rm, c.name, c.attr...); got != c.want {
			t.Errorf("%s%v = %d, want %d", c.name, c.attr, got, c.want)
		}
	}
	if n, sum := histogram(t, rm, fenceotel.MetricAcquireDuration); n != 1 || sum != 0 {
		t.Errorf("%s: %d samples summing %vs, want 1 of 0s (no wait on the fake clock)", fenceotel.MetricAcquireDuration, n, sum)
	}
	if n, sum := histogram(t, rm, fenceotel.MetricHoldDuration, str("fence.outcome", "released")); n != 1 || sum != (2*interval).Seconds() {
		t.Errorf("%s{released}: %d samples summing %vs, want 1 of %vs", fenceotel.MetricHoldDuration, n, sum, (2 * interval).Seconds())
	}
	ops := map[string]uint64{"acquire": 2, "renew": 2, "release": 1}
	for op, want := range ops {
		if n, _ := histogram(t, rm, fenceotel.MetricLockOperationDuration, str("fence.backend", "memory"), str("fence.operation", op)); n != want {
			t.Errorf("%s{operation=%s}: %d samples, want %d", fenceotel.MetricLockOperationDuration, op, n, want)
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == fenceotel.MetricLost {
				t.Errorf("%s recorded with no lease lost: %+v", m.Name, m.Data)
			}
		}
	}

	// Spans: the busy attempt is an outcome, not an error.
	acq := e.spansNamed("fence.lock.acquire")
	if len(acq) != 2 {
		t.Fatalf("%d acquire spans, want 2", len(acq))
	}
	if v, _ := attr(acq[0], "fence.outcome"); v.AsString() != "acquired" {
		t.Errorf("first acquire outcome %q", v.AsString())
	}
	if v, _ := attr(acq[0], "fence.token"); v.AsInt64() != int64(j.h.Token()) {
		t.Errorf("first acquire token %v, want %d", v.Emit(), j.h.Token())
	}
	if v, _ := attr(acq[1], "fence.outcome"); v.AsString() != "busy" {
		t.Errorf("second acquire outcome %q, want busy", v.AsString())
	}
	if v, _ := attr(acq[1], "fence.holder.token"); v.AsInt64() != int64(j.h.Token()) {
		t.Errorf("busy acquire holder token %v, want %d", v.Emit(), j.h.Token())
	}
	if st := acq[1].Status(); st.Code.String() != "Unset" {
		t.Errorf("busy acquire status %v, want unset", st)
	}
	for _, name := range []string{"fence.lock.acquire", "fence.lock.renew", "fence.lock.release"} {
		for _, s := range e.spansNamed(name) {
			if v, _ := attr(s, "fence.key"); v.AsString() != "acct-1" {
				t.Errorf("%s span key %q, want acct-1", name, v.AsString())
			}
			if v, _ := attr(s, "fence.backend"); v.AsString() != "memory" {
				t.Errorf("%s span backend %q, want memory", name, v.AsString())
			}
		}
	}
	logs := e.logs.String()
	for _, want := range []string{`msg="fence: lease acquired" key=acct-1 token=1 attempts=1`, `msg="fence: lock busy" key=acct-1`,
		`msg="fence: lease renewed" key=acct-1 token=1`, `msg="fence: lease released" key=acct-1 token=1 held=20s`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

// Every metric has its documented unit and instrument kind.
func TestUnits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	j := startJob(t, e.session(t), "k")
	_ = e.res.Put(t.Context(), "n", j.h.Token(), []byte("v"))
	e.waitIdle(t)
	if err := e.mem.Break(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(interval)
	<-j.ctx.Done()
	_ = j.end(func(context.Context, *fence.Handle) error { return nil })
	e.tel.DuplicateRefused(t.Context(), "ledger")
	rm := e.collect(t)
	tests := []struct{ name, unit, kind string }{
		{fenceotel.MetricAcquireAttempts, "{attempt}", "counter"},
		{fenceotel.MetricAcquireDuration, "s", "histogram"},
		{fenceotel.MetricHoldDuration, "s", "histogram"},
		{fenceotel.MetricRenewals, "{renewal}", "counter"},
		{fenceotel.MetricLost, "{lease}", "counter"},
		{fenceotel.MetricHeld, "{lease}", "updown"},
		{fenceotel.MetricLockOperationDuration, "s", "histogram"},
		{fenceotel.MetricResourceWrites, "{write}", "counter"},
		{fenceotel.MetricResourceOperationDuration, "s", "histogram"},
		{fenceotel.MetricDuplicatesRefused, "{attempt}", "counter"},
	}
	for _, tc := range tests {
		m := find(t, rm, tc.name)
		if m.Unit != tc.unit {
			t.Errorf("%s unit %q, want %q", tc.name, m.Unit, tc.unit)
		}
		if m.Description == "" {
			t.Errorf("%s has no description", tc.name)
		}
		kind := "histogram"
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
			kind = "counter"
			if !sum.IsMonotonic {
				kind = "updown"
			}
		}
		if kind != tc.kind {
			t.Errorf("%s is a %s, want a %s", tc.name, kind, tc.kind)
		}
	}
}

// Each call of an observed locker makes one span with its outcome and
// tokens, and one duration sample.
func TestLockCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	ctx := t.Context()
	var lease fence.Lease
	tests := []struct {
		name    string
		call    func() error
		span    string
		outcome string
		failed  bool
		attrs   map[string]string
	}{
		{name: "inspect never taken", span: "fence.lock.inspect", outcome: "ok", attrs: map[string]string{"fence.token": "0"},
			call: func() error { _, err := e.locker.Inspect(ctx, "k"); return err }},
		{name: "acquire", span: "fence.lock.acquire", outcome: "acquired", attrs: map[string]string{"fence.token": "1"},
			call: func() error { var err error; lease, err = e.locker.Acquire(ctx, "k", ttl, nil); return err }},
		{name: "acquire busy", span: "fence.lock.acquire", outcome: "busy", attrs: map[string]string{"fence.holder.token": "1"},
			call: func() error { _, err := e.locker.Acquire(ctx, "k", ttl, nil); return err }},
		{name: "renew", span: "fence.lock.renew", outcome: "renewed", attrs: map[string]string{"fence.token": "1"},
			call: func() error { _, err := e.locker.Renew(ctx, lease); return err }},
		{name: "inspect held", span: "fence.lock.inspect", outcome: "ok", attrs: map[string]string{"fence.token": "1"},
			call: func() error { _, err := e.locker.Inspect(ctx, "k"); return err }},
		{name: "publish", span: "fence.lock.publish", outcome: "published", attrs: map[string]string{"fence.token": "1"},
			call: func() error { return e.locker.Publish(ctx, lease, "10.0.0.1:80") }},
		{name: "break", span: "fence.lock.break", outcome: "broken",
			call: func() error { return e.locker.Break(ctx, "k") }},
		{name: "inspect broken", span: "fence.lock.inspect", outcome: "ok", attrs: map[string]string{"fence.token": "1"},
			call: func() error { _, err := e.locker.Inspect(ctx, "k"); return err }},
		{name: "release after break", span: "fence.lock.release", outcome: "not_held", failed: true, attrs: map[string]string{"fence.token": "1"},
			call: func() error { return e.locker.Release(ctx, lease) }},
		{name: "publish after break", span: "fence.lock.publish", outcome: "not_held", failed: true, attrs: map[string]string{"fence.token": "1"},
			call: func() error { return e.locker.Publish(ctx, lease, "10.0.0.1:80") }},
		{name: "invalid key", span: "fence.lock.inspect", outcome: "error", failed: true,
			call: func() error { _, err := e.locker.Inspect(ctx, ""); return err }},
	}
	for i, tc := range tests {
		err := tc.call()
		if (err != nil) != (tc.outcome == "busy" || tc.outcome == "not_held" || tc.outcome == "error") {
			t.Fatalf("%s: %v", tc.name, err)
		}
		spans := e.spans.Ended()
		if len(spans) != i+1 {
			t.Fatalf("%s: %d spans after %d calls", tc.name, len(spans), i+1)
		}
		s := spans[i]
		if s.Name() != tc.span {
			t.Errorf("%s: span %q, want %q", tc.name, s.Name(), tc.span)
		}
		key := "k"
		if tc.name == "invalid key" {
			key = ""
		}
		want := map[string]string{"fence.backend": "memory", "fence.key": key, "fence.outcome": tc.outcome}
		for k, v := range tc.attrs {
			want[k] = v
		}
		for k, v := range want {
			if got, ok := attr(s, k); !ok || got.Emit() != v {
				t.Errorf("%s: %s = %q, want %q", tc.name, k, got.Emit(), v)
			}
		}
		if failed := s.Status().Code == codes.Error; failed != tc.failed {
			t.Errorf("%s: status %+v, want error %v", tc.name, s.Status(), tc.failed)
		}
	}
	rm := e.collect(t)
	for op, want := range map[string]uint64{"acquire": 2, "renew": 1, "release": 1, "break": 1, "inspect": 4, "publish": 2} {
		if n, _ := histogram(t, rm, fenceotel.MetricLockOperationDuration, str("fence.backend", "memory"), str("fence.operation", op)); n != want {
			t.Errorf("%s{operation=%s}: %d samples, want %d", fenceotel.MetricLockOperationDuration, op, n, want)
		}
	}
	if logs := e.logs.String(); !strings.Contains(logs, `level=INFO msg="fence: lock broken" key=k backend=memory`) {
		t.Errorf("logs lack the break:\n%s", logs)
	}
}

// Session.LockAll on a store that takes a set in one operation is one
// fence.lock.acquire_all call, named by the set's first key.
func TestAcquireAllCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	sess, err := fence.NewSession(e.locker, &fence.SessionOptions{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.WithoutCancel(t.Context()))
	if _, err := sess.LockAll(t.Context(), []string{"b", "a"}, nil); err != nil {
		t.Fatal(err)
	}
	s := e.spansNamed("fence.lock.acquire_all")
	if len(s) != 1 {
		t.Fatalf("%d fence.lock.acquire_all spans, want 1", len(s))
	}
	for k, want := range map[string]string{"fence.backend": "memory", "fence.key": "a", "fence.outcome": "acquired", "fence.token": "1"} {
		if v, _ := attr(s[0], k); v.Emit() != want {
			t.Errorf("%s = %q, want %q", k, v.Emit(), want)
		}
	}
}

// A call this package does not know (a Locker's Create, should the root
// report it) gets a span, with no metric.
func TestOtherCallsGetASpan(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	ctx, end := e.tel.Observer().Call(t.Context(), fence.Call{Backend: "memory", Op: "create"})
	if ctx == nil || end == nil {
		t.Fatal("Call returned a nil context or end")
	}
	end(0, errors.New("no table"))
	s := e.spansNamed("fence.create")
	if len(s) != 1 {
		t.Fatalf("%d fence.create spans, want 1", len(s))
	}
	for k, want := range map[string]string{"fence.backend": "memory", "fence.outcome": "error"} {
		if v, _ := attr(s[0], k); v.Emit() != want {
			t.Errorf("%s = %q, want %q", k, v.Emit(), want)
		}
	}
	if st := s[0].Status(); st.Code != codes.Error || st.Description != "no table" {
		t.Errorf("status %+v, want the error", st)
	}
	rm := e.collect(t)
	for _, name := range []string{fenceotel.MetricLockOperationDuration, fenceotel.MetricResourceOperationDuration, fenceotel.MetricResourceWrites} {
		if hasMetric(rm, name) {
			t.Errorf("%s recorded for a create", name)
		}
	}
}
