package fenceotel_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// BenchmarkLockedWrite measures one lock of a session, one fenced Put and
// the release, on the in-memory backends: plain, observed with no-op
// providers, and observed with the SDK (a manual metric reader, every
// span recorded). The difference is the cost of the instrumentation per
// locked write.
func BenchmarkLockedWrite(b *testing.B) {
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
			locker := memory.New(nil)
			res := memres.New(nil)
			if c.opts != nil {
				tel, err := fenceotel.New(c.opts(b))
				if err != nil {
					b.Fatal(err)
				}
				locker.SetObserver(tel.Observer())
				res.SetObserver(tel.Observer())
			}
			sess, err := fence.NewSession(locker, nil)
			if err != nil {
				b.Fatal(err)
			}
			value := []byte("v")
			ctx := b.Context()
			for b.Loop() {
				h, err := sess.Lock(ctx, "k", nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := res.Put(ctx, "n", h.Token(), value); err != nil {
					b.Fatal(err)
				}
				if err := h.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
