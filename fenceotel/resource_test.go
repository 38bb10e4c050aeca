package fenceotel_test

import (
	"errors"
	"testing"

	"go.opentelemetry.io/otel/codes"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
)

// Each call through a wrapped resource makes one span with its outcome and
// tokens; writes are counted by outcome.
func TestResourceCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	ctx := t.Context()
	tests := []struct {
		name    string
		call    func() error
		span    string
		outcome string
		failed  bool
		attrs   map[string]string
	}{
		{name: "get never written", span: fenceotel.SpanGet, outcome: "not_found",
			call: func() error { _, _, err := e.res.Get(ctx, "a"); return err }},
		{name: "put", span: fenceotel.SpanPut, outcome: "accepted", attrs: map[string]string{fenceotel.AttrToken: "5"},
			call: func() error { return e.res.Put(ctx, "a", 5, []byte("x")) }},
		{name: "put equal token", span: fenceotel.SpanPut, outcome: "accepted",
			call: func() error { return e.res.Put(ctx, "a", 5, []byte("y")) }},
		{name: "get", span: fenceotel.SpanGet, outcome: "found", attrs: map[string]string{fenceotel.AttrToken: "5"},
			call: func() error { _, _, err := e.res.Get(ctx, "a"); return err }},
		{name: "stale delete", span: fenceotel.SpanDelete, outcome: "stale", failed: true,
			attrs: map[string]string{fenceotel.AttrToken: "4", fenceotel.AttrHighestToken: "5"},
			call:  func() error { return e.res.Delete(ctx, "a", 4) }},
		{name: "token 0", span: fenceotel.SpanPut, outcome: "error", failed: true,
			call: func() error { return e.res.Put(ctx, "a", 0, nil) }},
		{name: "delete", span: fenceotel.SpanDelete, outcome: "accepted",
			call: func() error { return e.res.Delete(ctx, "a", 6) }},
		{name: "highest", span: fenceotel.SpanHighest, outcome: "ok", attrs: map[string]string{fenceotel.AttrToken: "6"},
			call: func() error { _, err := e.res.Highest(ctx, "a"); return err }},
		{name: "stale claim", span: fenceotel.SpanClaim, outcome: "stale", failed: true,
			attrs: map[string]string{fenceotel.AttrToken: "5", fenceotel.AttrHighestToken: "6"},
			call:  func() error { return e.res.Claim(ctx, "a", 5) }},
		{name: "claim", span: fenceotel.SpanClaim, outcome: "accepted", attrs: map[string]string{fenceotel.AttrToken: "7"},
			call: func() error { return e.res.Claim(ctx, "a", 7) }},
		{name: "highest after claim", span: fenceotel.SpanHighest, outcome: "ok", attrs: map[string]string{fenceotel.AttrToken: "7"},
			call: func() error { _, err := e.res.Highest(ctx, "a"); return err }},
	}
	// The calls depend on each other: run them in order.
	for i, tc := range tests {
		err := tc.call()
		if (err != nil) != (tc.outcome == "stale" || tc.outcome == "error" || tc.outcome == "not_found") {
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
		want := map[string]string{fenceotel.AttrResource: "ledger", fenceotel.AttrResourceKey: "a", fenceotel.AttrOutcome: tc.outcome}
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
	writes := []struct {
		op, outcome string
		want        int64
	}{
		{"put", "accepted", 2}, {"put", "error", 1}, {"put", "stale", 0},
		{"delete", "accepted", 1}, {"delete", "stale", 1},
		{"claim", "accepted", 1}, {"claim", "stale", 1},
	}
	for _, w := range writes {
		if got := count(t, rm, fenceotel.MetricResourceWrites, str(fenceotel.AttrOperation, w.op), str(fenceotel.AttrOutcome, w.outcome)); got != w.want {
			t.Errorf("writes{%s,%s} = %d, want %d", w.op, w.outcome, got, w.want)
		}
	}
	if got := count(t, rm, fenceotel.MetricResourceWrites); got != 7 {
		t.Errorf("writes = %d, want 7 (gets and highest are not writes; claims are)", got)
	}
	if n, _ := histogram(t, rm, fenceotel.MetricResourceOperationDuration, str(fenceotel.AttrResource, "ledger")); n != uint64(len(tests)) {
		t.Errorf("operation duration: %d samples, want %d", n, len(tests))
	}
}

func TestDuplicateRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fenceotel.Options{})
	for range 3 {
		e.tel.DuplicateRefused(t.Context(), "ledger")
	}
	e.tel.DuplicateRefused(t.Context(), "reports")
	rm := e.collect(t)
	for res, want := range map[string]int64{"ledger": 3, "reports": 1} {
		if got := count(t, rm, fenceotel.MetricDuplicatesRefused, str(fenceotel.AttrResource, res)); got != want {
			t.Errorf("duplicates refused{%s} = %d, want %d", res, got, want)
		}
	}
}

func TestWrapRefusesBadInput(t *testing.T) {
	t.Parallel()
	tel, err := fenceotel.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, fenceotel.Options{})
	tests := []struct {
		name string
		call func() error
	}{
		{"nil locker", func() error { _, err := tel.WrapLocker(nil); return err }},
		{"nil locker, package function", func() error { _, err := fenceotel.WrapLocker(nil, nil); return err }},
		{"nil resource", func() error { _, err := tel.WrapResource(nil, "ledger"); return err }},
		{"empty resource name", func() error { _, err := tel.WrapResource(e.store, ""); return err }},
		{"nil resource, package function", func() error { _, err := fenceotel.WrapResource(nil, "x", nil); return err }},
	}
	for _, tc := range tests {
		if err := tc.call(); !errors.Is(err, fence.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
		}
	}
}
