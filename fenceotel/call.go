package fenceotel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/fencekit/fence"
)

// call is fence.Observer.Call: it starts the span of one store call of a
// Locker (fence.lock.<op>) or a Resource (fence.resource.<op>) and returns
// the function that ends it, records its duration and outcome, counts the
// writes and logs breaks and failed or stale writes.
func (t *Telemetry) call(ctx context.Context, c fence.Call) (context.Context, func(fence.Token, error)) {
	backend := attribute.String(attrBackend, c.Backend)
	op := attribute.String(attrOperation, c.Op)
	attrs := []attribute.KeyValue{backend}
	var hist metric.Float64Histogram
	var metricAttrs []attribute.KeyValue
	var name string
	switch c.Op {
	case "acquire", "acquire_all", "renew", "release", "break", "inspect", "publish":
		name = "fence.lock." + c.Op
		attrs = append(attrs, attribute.String(attrKey, c.Key))
		hist, metricAttrs = t.lockOpDuration, t.metricKey(c.Key, backend, op)
	case "put", "get", "delete", "highest", "claim":
		name = "fence.resource." + c.Op
		attrs = append(attrs, attribute.String(attrResourceKey, c.Key))
		hist, metricAttrs = t.resOpDuration, []attribute.KeyValue{backend, op}
	default: // create, or an operation this package does not know: a span only
		name = "fence." + c.Op
		if c.Key != "" {
			attrs = append(attrs, attribute.String(attrKey, c.Key))
		}
	}
	if c.Token != 0 {
		attrs = append(attrs, tokenAttr(attrToken, c.Token))
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
	start := time.Now()
	return ctx, func(token fence.Token, err error) {
		outcome, failed, more := t.outcome(c, token, err)
		out := attribute.String(attrOutcome, outcome)
		span.SetAttributes(append(more, out)...)
		if failed {
			msg := safeError(err)
			span.AddEvent("exception", trace.WithAttributes(
				attribute.String("exception.type", fmt.Sprintf("%T", err)),
				attribute.String("exception.message", msg)))
			span.SetStatus(codes.Error, msg)
		}
		span.End()
		if hist != nil {
			hist.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(append(metricAttrs, out)...))
		}
		switch c.Op {
		case "put", "delete", "claim":
			t.writes.Add(ctx, 1, metric.WithAttributes(backend, op, out))
			t.logWrite(ctx, c, outcome, err)
		case "break":
			t.logBreak(ctx, c, err)
		}
	}
}

// outcome classifies the end of call c: its outcome, whether err is a
// failure to record on the span (a busy key and a name not found are
// outcomes, not failures; a stale write is one), and the span's
// attributes known only now.
func (t *Telemetry) outcome(c fence.Call, token fence.Token, err error) (outcome string, failed bool, attrs []attribute.KeyValue) {
	if err != nil {
		outcome, failed = outcomeError, true
	}
	switch c.Op {
	case "acquire", "acquire_all":
		if err == nil {
			return outcomeAcquired, false, []attribute.KeyValue{tokenAttr(attrToken, token)}
		}
		if held, ok := errors.AsType[*fence.HeldError](err); ok {
			if held.Token != 0 {
				attrs = append(attrs, tokenAttr(attrHolderToken, held.Token))
			}
			return outcomeBusy, false, attrs
		}
	case "renew":
		outcome = heldOutcome(err, outcomeRenewed)
	case "release":
		outcome = heldOutcome(err, outcomeReleased)
	case "publish":
		outcome = heldOutcome(err, outcomePublished)
	case "break":
		if err == nil {
			outcome = outcomeBroken
		}
	case "put", "delete", "claim":
		switch stale, isStale := errors.AsType[*fence.StaleTokenError](err); {
		case err == nil:
			outcome = outcomeAccepted
		case errors.Is(err, fence.ErrStaleToken):
			outcome = outcomeStale
			if isStale && stale.Highest != 0 {
				attrs = append(attrs, tokenAttr(attrHighestToken, stale.Highest))
			}
		}
	case "get":
		switch {
		case err == nil:
			return outcomeFound, false, []attribute.KeyValue{tokenAttr(attrToken, token)}
		case errors.Is(err, fence.ErrNotFound):
			return outcomeNotFound, false, nil
		}
	case "inspect", "highest":
		// inspect: the last token issued for the key; highest: the
		// highest token accepted.
		if err == nil {
			return outcomeOK, false, []attribute.KeyValue{tokenAttr(attrToken, token)}
		}
	default:
		if err == nil {
			outcome = outcomeOK
		}
	}
	return outcome, failed, attrs
}

// heldOutcome is ok when err is nil, not_held when err matches
// fence.ErrNotHeld, error otherwise.
func heldOutcome(err error, ok string) string {
	switch {
	case err == nil:
		return ok
	case errors.Is(err, fence.ErrNotHeld):
		return outcomeNotHeld
	default:
		return outcomeError
	}
}

// logBreak logs a break, an operator action, at Info (Warn when it
// failed).
func (t *Telemetry) logBreak(ctx context.Context, c fence.Call, err error) {
	if t.log == nil {
		return
	}
	if err == nil {
		t.log.LogAttrs(ctx, slog.LevelInfo, "fence: lock broken", slog.String("key", c.Key), slog.String("backend", c.Backend))
		return
	}
	t.log.LogAttrs(ctx, slog.LevelWarn, "fence: break failed", slog.String("key", c.Key), slog.String("backend", c.Backend),
		slog.String("error", safeError(err)))
}

// logWrite logs a write that was refused as stale or failed, at Warn.
func (t *Telemetry) logWrite(ctx context.Context, c fence.Call, outcome string, err error) {
	if t.log == nil || err == nil {
		return
	}
	attrs := []slog.Attr{slog.String("backend", c.Backend), slog.String("name", c.Key),
		slog.Uint64("token", uint64(c.Token)), slog.String("operation", c.Op)}
	if outcome == outcomeStale {
		if stale, ok := errors.AsType[*fence.StaleTokenError](err); ok && stale.Highest != 0 {
			attrs = append(attrs, slog.Uint64("highest", uint64(stale.Highest)))
		}
		t.log.LogAttrs(ctx, slog.LevelWarn, "fence: stale write refused", attrs...)
		return
	}
	t.log.LogAttrs(ctx, slog.LevelWarn, "fence: write failed", append(attrs, slog.String("error", safeError(err)))...)
}
