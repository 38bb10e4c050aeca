package fenceotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
)

// A lease taken, renewed twice and released, with a busy attempt by a
// second caller meanwhile.
func TestGuardMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	g := e.guard(t)
	j := startJob(t, g, "acct-1")
	ran := false
	if err := g.Do(t.Context(), "acct-1", func(context.Context, *fence.Handle) error { ran = true; return nil }); !errors.Is(err, fence.ErrHeld) || ran {
		t.Fatalf("second Do: %v (ran %v), want ErrHeld without running", err, ran)
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
		{fenceotel.MetricAcquireAttempts, []attribute.KeyValue{str(fenceotel.AttrOutcome, "acquired")}, 1},
		{fenceotel.MetricAcquireAttempts, []attribute.KeyValue{str(fenceotel.AttrOutcome, "busy")}, 1},
		{fenceotel.MetricAcquireAttempts, []attribute.KeyValue{str(fenceotel.AttrOutcome, "error")}, 0},
		{fenceotel.MetricRenewals, []attribute.KeyValue{str(fenceotel.AttrOutcome, "renewed")}, 2},
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
	if n, sum := histogram(t, rm, fenceotel.MetricHoldDuration, str(fenceotel.AttrOutcome, "released")); n != 1 || sum != (2*interval).Seconds() {
		t.Errorf("%s{released}: %d samples summing %vs, want 1 of %vs", fenceotel.MetricHoldDuration, n, sum, (2 * interval).Seconds())
	}
	ops := map[string]uint64{"acquire": 2, "renew": 2, "release": 1}
	for op, want := range ops {
		if n, _ := histogram(t, rm, fenceotel.MetricLockOperationDuration, str(fenceotel.AttrOperation, op)); n != want {
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
	acq := e.spansNamed(fenceotel.SpanAcquire)
	if len(acq) != 2 {
		t.Fatalf("%d acquire spans, want 2", len(acq))
	}
	if v, _ := attr(acq[0], fenceotel.AttrOutcome); v.AsString() != "acquired" {
		t.Errorf("first acquire outcome %q", v.AsString())
	}
	if v, _ := attr(acq[0], fenceotel.AttrToken); v.AsInt64() != int64(j.h.Token()) {
		t.Errorf("first acquire token %v, want %d", v.Emit(), j.h.Token())
	}
	if v, _ := attr(acq[1], fenceotel.AttrOutcome); v.AsString() != "busy" {
		t.Errorf("second acquire outcome %q, want busy", v.AsString())
	}
	if v, _ := attr(acq[1], fenceotel.AttrHolderToken); v.AsInt64() != int64(j.h.Token()) {
		t.Errorf("busy acquire holder token %v, want %d", v.Emit(), j.h.Token())
	}
	if st := acq[1].Status(); st.Code.String() != "Unset" {
		t.Errorf("busy acquire status %v, want unset", st)
	}
	for _, name := range []string{fenceotel.SpanAcquire, fenceotel.SpanRenew, fenceotel.SpanRelease} {
		for _, s := range e.spansNamed(name) {
			if v, _ := attr(s, fenceotel.AttrKey); v.AsString() != "acct-1" {
				t.Errorf("%s span key %q, want acct-1", name, v.AsString())
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
	g := e.guard(t)
	j := startJob(t, g, "k")
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
