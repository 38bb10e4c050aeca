package fenceotel_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
	"github.com/fencekit/fence/lockers/memory"
	memres "github.com/fencekit/fence/resources/memory"
)

// Record the metrics of the sessions over a locker. A real program passes
// the MeterProvider of its exporter (Prometheus, OTLP) or sets the global
// one.
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
	locker := memory.New(nil)
	locker.SetObserver(tel.Observer())
	sess, err := fence.NewSession(locker, nil) // reports to the locker's observer
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := sess.Lock(ctx, "nightly-report", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	// A second replica finds the job running and skips its turn.
	_, err = sess.Lock(ctx, "nightly-report", nil)
	fmt.Println("second replica busy:", errors.Is(err, fence.ErrHeld))
	_ = h.Release(ctx)

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
			outcome, _ := p.Attributes.Value("fence.outcome")
			fmt.Printf("%s{fence.outcome=%s} %d\n", m.Name, outcome.AsString(), p.Value)
		}
	}
	// Unordered output:
	// second replica busy: true
	// fence.lock.acquire.attempts{fence.outcome=acquired} 1
	// fence.lock.acquire.attempts{fence.outcome=busy} 1
}

// Log the writes a resource refuses: the record names the backend, the
// key and both tokens, never an owner id.
func ExampleTelemetry_Observer_resource() {
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
	ledger := memres.New(nil)
	ledger.SetObserver(tel.Observer())
	_ = ledger.Put(ctx, "account/42", 7, []byte("balance=100"))
	err = ledger.Put(ctx, "account/42", 6, []byte("balance=90")) // a paused holder wakes up
	fmt.Println("stale:", errors.Is(err, fence.ErrStaleToken))
	// Output:
	// level=WARN msg="fence: stale write refused" backend=memory name=account/42 token=6 operation=put highest=7
	// stale: true
}

// Trace the store calls of a locker: each gets a span with the key, the
// token and the outcome, a child of the span in the caller's context. A
// real program passes its TracerProvider or sets the global one.
func ExampleTelemetry_Observer_spans() {
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	tel, err := fenceotel.New(&fenceotel.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	locker := memory.New(nil)
	locker.SetObserver(tel.Observer())
	sess, err := fence.NewSession(locker, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, _ := sess.Lock(ctx, "migrations", nil)
	_, _ = sess.Lock(ctx, "migrations", nil) // busy
	_ = h.Release(ctx)

	for _, s := range spans.Ended() {
		var key, outcome string
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "fence.key":
				key = kv.Value.AsString()
			case "fence.outcome":
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
