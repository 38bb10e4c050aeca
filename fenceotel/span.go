package fenceotel

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// call is one traced and timed call through a wrapper.
type call struct {
	t     *Telemetry
	span  trace.Span
	start time.Time
	hist  metric.Float64Histogram
	attrs []attribute.KeyValue // metric attributes, without the outcome
	owner string               // redacted from error texts
}

// begin starts the span name with attrs and the clock of the call.
func (t *Telemetry) begin(ctx context.Context, name string, hist metric.Float64Histogram, metricAttrs []attribute.KeyValue, attrs ...attribute.KeyValue) (context.Context, *call) {
	ctx, span := t.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
	return ctx, &call{t: t, span: span, start: time.Now(), hist: hist, attrs: metricAttrs}
}

// end records the outcome on the span and the duration histogram, and
// err on the span when failed is true: an exception event with a
// redacted message and an Error status. Expected refusals (a busy key, a
// name not found) pass failed = false and keep the status unset.
func (c *call) end(ctx context.Context, outcome string, err error, failed bool, attrs ...attribute.KeyValue) {
	out := attribute.String(AttrOutcome, outcome)
	c.span.SetAttributes(append(attrs, out)...)
	if err != nil && failed {
		msg := safeError(err, c.owner)
		c.span.AddEvent("exception", trace.WithAttributes(
			attribute.String("exception.type", fmt.Sprintf("%T", err)),
			attribute.String("exception.message", msg)))
		c.span.SetStatus(codes.Error, msg)
	}
	c.span.End()
	c.hist.Record(ctx, time.Since(c.start).Seconds(), metric.WithAttributes(append(c.attrs, out)...))
}
