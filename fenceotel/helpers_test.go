package fenceotel_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/clocktest"
	"github.com/fencekit/fence/fenceotel"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// TTL 30 s: renewals every 10 s, safety deadline 27 s after the send time
// of the last successful acquire or renew.
const (
	ttl      = 30 * time.Second
	interval = ttl / 3
	deadline = ttl - ttl/10
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// env is the real guard, memory locker and memory resource on a fake
// clock, instrumented with in-memory metric and span readers and a logger
// writing to a buffer.
type env struct {
	clk    *clocktest.Fake
	mem    *memory.Locker
	faults *faultyLocker // between the instrumented locker and mem
	locker fence.Locker  // instrumented: what the guard calls
	store  *memres.Resource
	res    fence.Resource // instrumented store, named "ledger"
	tel    *fenceotel.Telemetry
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	logs   *syncBuffer
}

func newEnv(t *testing.T, opts fenceotel.Options) *env {
	t.Helper()
	e := &env{clk: clocktest.New(epoch), reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder(), logs: &syncBuffer{}}
	e.mem = memory.New(&memory.Options{Clock: e.clk})
	e.faults = &faultyLocker{Locker: e.mem}
	e.store = memres.New(nil)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(e.reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.spans))
	t.Cleanup(func() {
		_ = mp.Shutdown(context.Background())
		_ = tp.Shutdown(context.Background())
	})
	opts.MeterProvider, opts.TracerProvider = mp, tp
	opts.Logger = slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tel, err := fenceotel.New(&opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.tel = tel
	if e.locker, err = tel.WrapLocker(e.faults); err != nil {
		t.Fatal(err)
	}
	if e.res, err = tel.WrapResource(e.store, "ledger"); err != nil {
		t.Fatal(err)
	}
	return e
}

// guard returns a guard over the instrumented locker with the
// Telemetry's observer, TTL 30 s, on the fake clock.
func (e *env) guard(t *testing.T) *guard.Guard {
	t.Helper()
	g, err := guard.New(e.locker, &guard.Options{TTL: ttl, Clock: e.clk, Observer: e.tel.Observer()})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// collect reads the metrics recorded so far.
func (e *env) collect(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := e.reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// find returns the metric called name, failing the test if it is missing.
func find(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Metrics {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				if sm.Scope.Name != fenceotel.ScopeName {
					t.Errorf("%s in scope %q, want %q", name, sm.Scope.Name, fenceotel.ScopeName)
				}
				return m
			}
		}
	}
	t.Fatalf("metric %s not recorded", name)
	return metricdata.Metrics{}
}

// has reports whether set carries every attribute of want.
func has(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// count sums the points of the int64 counter or up-down counter name
// whose attributes include want.
func count(t *testing.T, rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) int64 {
	t.Helper()
	sum, ok := find(t, rm, name).Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is a %T, want an int64 sum", name, find(t, rm, name).Data)
	}
	var n int64
	for _, p := range sum.DataPoints {
		if has(p.Attributes, want) {
			n += p.Value
		}
	}
	return n
}

// histogram sums the count and sum of the points of the float64
// histogram name whose attributes include want.
func histogram(t *testing.T, rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) (n uint64, sum float64) {
	t.Helper()
	h, ok := find(t, rm, name).Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is a %T, want a float64 histogram", name, find(t, rm, name).Data)
	}
	for _, p := range h.DataPoints {
		if has(p.Attributes, want) {
			n += p.Count
			sum += p.Sum
		}
	}
	return n, sum
}

// spansNamed returns the ended spans called name, in order.
func (e *env) spansNamed(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range e.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// attr returns the value of key on span s.
func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func str(k, v string) attribute.KeyValue { return attribute.String(k, v) }

// job is a Do call on its own goroutine whose fn waits to be told to
// return.
type job struct {
	ctx    context.Context
	h      *fence.Handle
	start  chan struct{}
	finish chan func(ctx context.Context, h *fence.Handle) error
	done   chan error
}

// startJob runs g.Do(key) and waits until fn runs.
func startJob(t *testing.T, g *guard.Guard, key string) *job {
	t.Helper()
	j := &job{start: make(chan struct{}), finish: make(chan func(context.Context, *fence.Handle) error, 1), done: make(chan error, 1)}
	go func() {
		j.done <- g.Do(t.Context(), key, func(ctx context.Context, h *fence.Handle) error {
			j.ctx, j.h = ctx, h
			close(j.start)
			return (<-j.finish)(ctx, h)
		})
	}()
	select {
	case <-j.start:
	case err := <-j.done:
		t.Fatalf("Do returned before fn ran: %v", err)
	}
	return j
}

// end makes fn return f(ctx, h) and returns Do's error.
func (j *job) end(f func(ctx context.Context, h *fence.Handle) error) error {
	j.finish <- f
	return <-j.done
}

// waitIdle waits until the renewer armed its two timers (safety deadline
// and next renewal).
func (e *env) waitIdle(t *testing.T) {
	t.Helper()
	if err := e.clk.WaitTimers(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for the guard's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// faultyLocker passes calls to a real Locker, except Renew when a renew
// hook is set.
type faultyLocker struct {
	fence.Locker
	mu      sync.Mutex
	renew   func(ctx context.Context, lease fence.Lease) (fence.Lease, error)
	acquire func(ctx context.Context, key string) (fence.Lease, error)
}

func (f *faultyLocker) setAcquire(a func(ctx context.Context, key string) (fence.Lease, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acquire = a
}

func (f *faultyLocker) Acquire(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions) (fence.Lease, error) {
	f.mu.Lock()
	a := f.acquire
	f.mu.Unlock()
	if a != nil {
		return a(ctx, key)
	}
	return f.Locker.Acquire(ctx, key, ttl, opts)
}

func (f *faultyLocker) setRenew(r func(ctx context.Context, lease fence.Lease) (fence.Lease, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renew = r
}

func (f *faultyLocker) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	f.mu.Lock()
	r := f.renew
	f.mu.Unlock()
	if r != nil {
		return r(ctx, lease)
	}
	return f.Locker.Renew(ctx, lease)
}

// hasMetric reports whether rm holds a metric called name.
func hasMetric(rm metricdata.ResourceMetrics, name string) bool {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return true
			}
		}
	}
	return false
}
