package fenceotel_test

import (
	"testing"

	"go.opentelemetry.io/otel/codes"

	"github.com/fencekit/fence/fenceotel"
)

// Each call of an observed resource makes one span with its outcome and
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
		{name: "get never written", span: "fence.resource.get", outcome: "not_found",
			call: func() error { _, _, err := e.res.Get(ctx, "a"); return err }},
		{name: "put", span: "fence.resource.put", outcome: "accepted", attrs: map[string]string{"fence.token": "5"},
			call: func() error { return e.res.Put(ctx, "a", 5, []byte("x")) }},
		{name: "put equal token", span: "fence.resource.put", outcome: "accepted",
			call: func() error { return e.res.Put(ctx, "a", 5, []byte("y")) }},
		{name: "get", span: "fence.resource.get", outcome: "found", attrs: map[string]string{"fence.token": "5"},
			call: func() error { _, _, err := e.res.Get(ctx, "a"); return err }},
		{name: "stale delete", span: "fence.resource.delete", outcome: "stale", failed: true,
			attrs: map[string]string{"fence.token": "4", "fence.token.highest": "5"},
			call:  func() error { return e.res.Delete(ctx, "a", 4) }},
		{name: "token 0", span: "fence.resource.put", outcome: "error", failed: true,
			call: func() error { return e.res.Put(ctx, "a", 0, nil) }},
		{name: "delete", span: "fence.resource.delete", outcome: "accepted",
			call: func() error { return e.res.Delete(ctx, "a", 6) }},
		{name: "highest", span: "fence.resource.highest", outcome: "ok", attrs: map[string]string{"fence.token": "6"},
			call: func() error { _, err := e.res.Highest(ctx, "a"); return err }},
		{name: "stale claim", span: "fence.resource.claim", outcome: "stale", failed: true,
			attrs: map[string]string{"fence.token": "5", "fence.token.highest": "6"},
			call:  func() error { return e.res.Claim(ctx, "a", 5) }},
		{name: "claim", span: "fence.resource.claim", outcome: "accepted", attrs: map[string]string{"fence.token": "7"},
			call: func() error { return e.res.Claim(ctx, "a", 7) }},
		{name: "highest after claim", span: "fence.resource.highest", outcome: "ok", attrs: map[string]string{"fence.token": "7"},
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
		want := map[string]string{"fence.backend": "memory", "fence.resource.key": "a", "fence.outcome": tc.outcome}
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
		if got := count(t, rm, fenceotel.MetricResourceWrites, str("fence.operation", w.op), str("fence.outcome", w.outcome)); got != w.want {
			t.Errorf("writes{%s,%s} = %d, want %d", w.op, w.outcome, got, w.want)
		}
	}
	if got := count(t, rm, fenceotel.MetricResourceWrites, str("fence.backend", "memory")); got != 7 {
		t.Errorf("writes = %d, want 7 (gets and highest are not writes; claims are)", got)
	}
	if n, _ := histogram(t, rm, fenceotel.MetricResourceOperationDuration, str("fence.backend", "memory")); n != uint64(len(tests)) {
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
		if got := count(t, rm, fenceotel.MetricDuplicatesRefused, str("fence.resource", res)); got != want {
			t.Errorf("duplicates refused{%s} = %d, want %d", res, got, want)
		}
	}
}
