package fenceotel_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
	"github.com/fencekit/fence/guard"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// Record the guard's metrics. A real program passes the MeterProvider of
// its exporter (Prometheus, OTLP) or sets the global one.
func ExampleTelemetry_Observer() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	tel, err := fenceotel.New(&fenceotel.Options{
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := guard.New(memory.New(nil), &guard.Options{Observer: tel.Observer()})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = g.Do(ctx, "nightly-report", func(ctx context.Context, h *fence.Handle) error {
		// A second replica finds the job running and skips its turn.
		err := g.Do(ctx, "nightly-report", func(context.Context, *fence.Handle) error { return nil })
		fmt.Println("second replica busy:", errors.Is(err, fence.ErrHeld))
		return nil
	})

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name != fenceotel.MetricAcquireAttempts {
			continue
		}
		for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
			outcome, _ := p.Attributes.Value(fenceotel.AttrOutcome)
			fmt.Printf("%s{%s=%s} %d\n", m.Name, fenceotel.AttrOutcome, outcome.AsString(), p.Value)
		}
	}
	// Unordered output:
	// second replica busy: true
	// fence.lock.acquire.attempts{fence.outcome=acquired} 1
	// fence.lock.acquire.attempts{fence.outcome=busy} 1
}

// Log the writes a resource refuses: the record names the resource, the
// name and both tokens, never an owner id.
func ExampleTelemetry_WrapResource() {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // keep the example's output stable
			}
			return a
		},
	}))
	tel, err := fenceotel.New(&fenceotel.Options{Logger: logger})
	if err != nil {
		fmt.Println(err)
		return
	}
	ledger, err := tel.WrapResource(memres.New(nil), "ledger")
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = ledger.Put(ctx, "account/42", 7, []byte("balance=100"))
	err = ledger.Put(ctx, "account/42", 6, []byte("balance=90")) // a paused holder wakes up
	fmt.Println("stale:", errors.Is(err, fence.ErrStaleToken))
	// Output:
	// level=WARN msg="fence: stale write refused" resource=ledger name=account/42 token=6 operation=put highest=7
	// stale: true
}

// Trace the locker calls: each gets a span with the key, the token and
// the outcome. A real program passes its TracerProvider or sets the
// global one.
func ExampleTelemetry_WrapLocker() {
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	tel, err := fenceotel.New(&fenceotel.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	locker, err := tel.WrapLocker(memory.New(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	lease, _ := locker.Acquire(ctx, "migrations", time.Minute, nil)
	_, _ = locker.Acquire(ctx, "migrations", time.Minute, nil) // busy
	_ = locker.Release(ctx, lease)

	for _, s := range spans.Ended() {
		var key, outcome string
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case fenceotel.AttrKey:
				key = kv.Value.AsString()
			case fenceotel.AttrOutcome:
				outcome = kv.Value.AsString()
			}
		}
		fmt.Println(s.Name(), key, outcome)
	}
	// Output:
	// fence.lock.acquire migrations acquired
	// fence.lock.acquire migrations busy
	// fence.lock.release migrations released
}
