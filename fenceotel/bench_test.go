package fenceotel_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// BenchmarkGuardedWrite measures one guard.Do with one fenced Put on the
// in-memory backends: plain, instrumented with no-op providers, and
// instrumented with the SDK (a manual metric reader, every span recorded).
// The difference is the cost of the instrumentation per guarded write.
func BenchmarkGuardedWrite(b *testing.B) {
	sdk := func(b *testing.B) *fenceotel.Options {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
		return &fenceotel.Options{MeterProvider: mp, TracerProvider: tp}
	}
	cases := []struct {
		name string
		opts func(b *testing.B) *fenceotel.Options // nil: not instrumented
	}{
		{"plain", nil},
		{"noop", func(*testing.B) *fenceotel.Options { return nil }},
		{"sdk", sdk},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var locker fence.Locker = memory.New(nil)
			var res fence.Resource = memres.New(nil)
			var obs *guard.Observer
			if c.opts != nil {
				tel, err := fenceotel.New(c.opts(b))
				if err != nil {
					b.Fatal(err)
				}
				locker, _ = tel.WrapLocker(locker)
				res, _ = tel.WrapResource(res, "bench")
				obs = tel.Observer()
			}
			g, err := guard.New(locker, &guard.Options{Observer: obs})
			if err != nil {
				b.Fatal(err)
			}
			value := []byte("v")
			ctx := b.Context()
			for b.Loop() {
				if err := g.Do(ctx, "k", func(ctx context.Context, h *fence.Handle) error {
					return res.Put(ctx, "n", h.Token(), value)
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
