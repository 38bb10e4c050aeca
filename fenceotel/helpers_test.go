package fenceotel_test

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/fenceotel"
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

// scopeName is the documented instrumentation scope.
const scopeName = "github.com/fencekit/fence/fenceotel"

// env is a memory locker and a memory resource on a fake clock,
// instrumented with in-memory metric and span readers and a logger writing
// to a buffer.
type env struct {
	clk    *clocktest.Fake
	mem    *fence.Locker // not instrumented
	faults *faultyDriver // between the instrumented locker and mem's store
	locker *fence.Locker // instrumented, over mem's store: what sessions use
	res    *fence.Resource
	tel    *fenceotel.Telemetry
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	logs   *syncBuffer
}

func newEnv(t *testing.T, opts fenceotel.Options) *env {
	t.Helper()
	e := &env{clk: clocktest.New(epoch), reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder(), logs: &syncBuffer{}}
	e.mem = memory.New(&memory.Options{Clock: e.clk})
	var err error
	e.locker, err = driver.Wrap(e.mem, func(d driver.Locker) driver.Locker {
		e.faults = &faultyDriver{Locker: d}
		return e.faults
	})
	if err != nil {
		t.Fatal(err)
	}
	e.res = memres.New(nil)
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
	e.locker.SetObserver(tel.Observer())
	e.res.SetObserver(tel.Observer())
	return e
}

// session returns a session over the instrumented locker, TTL 30 s, on
// the fake clock.
func (e *env) session(t *testing.T) *fence.Session {
	t.Helper()
	s, err := fence.NewSession(e.locker, &fence.SessionOptions{TTL: ttl, Clock: e.clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
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
				if sm.Scope.Name != scopeName {
					t.Errorf("%s in scope %q, want %q", name, sm.Scope.Name, scopeName)
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

// job is work under a lease of a session: the lease is taken by
// startJob, and end runs the work and releases it, as guard.Run does.
type job struct {
	ctx    context.Context // cancelled when the lease is lost
	cancel context.CancelFunc
	h      *fence.Handle
}

// startJob takes key through s, trying once.
func startJob(t *testing.T, s *fence.Session, key string) *job {
	t.Helper()
	h, err := s.Lock(t.Context(), key, nil)
	if err != nil {
		t.Fatalf("Lock %s: %v", key, err)
	}
	ctx, cancel := h.Context(t.Context())
	return &job{ctx: ctx, cancel: cancel, h: h}
}

// end runs f as the work, releases the lease and returns f's error,
// joined with the *fence.LeaseLostError if the lease was lost.
func (j *job) end(f func(ctx context.Context, h *fence.Handle) error) error {
	err := f(j.ctx, j.h)
	j.cancel()
	_ = j.h.Release(context.Background())
	if lost, ok := errors.AsType[*fence.LeaseLostError](j.h.Err()); ok && !errors.Is(err, fence.ErrLeaseLost) {
		err = errors.Join(err, lost)
	}
	return err
}

// waitIdle waits until the session's keepalive armed its two timers (safety deadline
// and next renewal).
func (e *env) waitIdle(t *testing.T) {
	t.Helper()
	if err := e.clk.WaitTimers(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for the sessions' goroutines.
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

// faultyDriver passes calls to a real store, except Acquire and Renew
// when a hook is set.
type faultyDriver struct {
	driver.Locker
	mu      sync.Mutex
	renew   func(ctx context.Context, lease fence.Lease) error
	acquire func(ctx context.Context, key string) (fence.Lease, error)
}

func (f *faultyDriver) setAcquire(a func(ctx context.Context, key string) (fence.Lease, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acquire = a
}

func (f *faultyDriver) Acquire(ctx context.Context, key, owner string, ttl time.Duration) (fence.Lease, error) {
	f.mu.Lock()
	a := f.acquire
	f.mu.Unlock()
	if a != nil {
		return a(ctx, key)
	}
	return f.Locker.Acquire(ctx, key, owner, ttl)
}

func (f *faultyDriver) setRenew(r func(ctx context.Context, lease fence.Lease) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renew = r
}

func (f *faultyDriver) Renew(ctx context.Context, lease fence.Lease) error {
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

// Publish forwards to the memory driver, which keeps values.
func (f *faultyDriver) Publish(ctx context.Context, lease fence.Lease, value string) error {
	return f.Locker.(driver.Publisher).Publish(ctx, lease, value)
}

// AcquireAll forwards to the memory driver, which takes sets at once.
func (f *faultyDriver) AcquireAll(ctx context.Context, keys, owners []string, ttl time.Duration) ([]fence.Lease, error) {
	return f.Locker.(driver.MultiAcquirer).AcquireAll(ctx, keys, owners, ttl)
}
