package fenceotel

import (
	"context"
	"errors"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/fencekit/fence"
)

// tracedResource is a fence.Resource with spans, metrics and logs around
// each call of the Resource it wraps.
type tracedResource struct {
	t    *Telemetry
	next fence.Resource
	name attribute.KeyValue // fence.resource
}

var _ fence.Resource = (*tracedResource)(nil)

// WrapResource returns a fence.Resource that calls r and, around each
// call, starts a span (fence.resource.put, .get, .delete, .highest)
// carrying fence.resource = name, fence.resource.key, fence.token and
// fence.outcome, and records fence.resource.operation.duration. Put and
// Delete are also counted in fence.resource.writes by outcome: accepted,
// stale (refused with fence.ErrStaleToken; logged at Warn, with both
// tokens on the span) or error. name identifies the protected store in
// metrics, so it must come from a small fixed set ("ledger", "reports").
// A nil r or an empty name gets an error matching fence.ErrInvalid.
func (t *Telemetry) WrapResource(r fence.Resource, name string) (fence.Resource, error) {
	if r == nil {
		return nil, &fence.InvalidError{Field: "resource", Reason: "nil"}
	}
	if name == "" {
		return nil, &fence.InvalidError{Field: "name", Reason: "empty"}
	}
	return &tracedResource{t: t, next: r, name: attribute.String(AttrResource, name)}, nil
}

// WrapResource is New followed by Telemetry.WrapResource.
func WrapResource(r fence.Resource, name string, opts *Options) (fence.Resource, error) {
	t, err := New(opts)
	w, werr := t.WrapResource(r, name)
	if werr != nil {
		return nil, werr
	}
	return w, err
}

func (w *tracedResource) begin(ctx context.Context, span, op, key string, attrs ...attribute.KeyValue) (context.Context, *call) {
	return w.t.begin(ctx, span, w.t.resOpDuration,
		[]attribute.KeyValue{w.name, attribute.String(AttrOperation, op)},
		append(attrs, w.name, attribute.String(AttrResourceKey, key))...)
}

// Put calls the wrapped Put; outcome accepted, stale or error.
func (w *tracedResource) Put(ctx context.Context, name string, token fence.Token, value []byte) error {
	ctx, c := w.begin(ctx, SpanPut, "put", name, tokenAttr(AttrToken, token))
	err := w.next.Put(ctx, name, token, value)
	w.write(ctx, c, "put", name, token, err)
	return err
}

// Delete calls the wrapped Delete; outcome accepted, stale or error.
func (w *tracedResource) Delete(ctx context.Context, name string, token fence.Token) error {
	ctx, c := w.begin(ctx, SpanDelete, "delete", name, tokenAttr(AttrToken, token))
	err := w.next.Delete(ctx, name, token)
	w.write(ctx, c, "delete", name, token, err)
	return err
}

// Claim calls the wrapped Claim; outcome accepted, stale or error, counted
// with the writes (operation "claim").
func (w *tracedResource) Claim(ctx context.Context, name string, token fence.Token) error {
	ctx, c := w.begin(ctx, SpanClaim, "claim", name, tokenAttr(AttrToken, token))
	err := w.next.Claim(ctx, name, token)
	w.write(ctx, c, "claim", name, token, err)
	return err
}

// write ends the call of a Put, Delete or Claim and counts it.
func (w *tracedResource) write(ctx context.Context, c *call, op, name string, token fence.Token, err error) {
	outcome := OutcomeAccepted
	var attrs []attribute.KeyValue
	stale, isStale := errors.AsType[*fence.StaleTokenError](err)
	switch {
	case err == nil:
	case errors.Is(err, fence.ErrStaleToken):
		outcome = OutcomeStale
		if isStale && stale.Highest != 0 {
			attrs = append(attrs, tokenAttr(AttrHighestToken, stale.Highest))
		}
	default:
		outcome = OutcomeError
	}
	c.end(ctx, outcome, err, err != nil, attrs...)
	w.t.writes.Add(ctx, 1, metric.WithAttributes(w.name, attribute.String(AttrOperation, op), attribute.String(AttrOutcome, outcome)))
	if w.t.log == nil || err == nil {
		return
	}
	logAttrs := []slog.Attr{slog.String("resource", w.name.Value.AsString()), slog.String("name", name),
		slog.Uint64("token", uint64(token)), slog.String("operation", op)}
	if outcome == OutcomeStale {
		if isStale && stale.Highest != 0 {
			logAttrs = append(logAttrs, slog.Uint64("highest", uint64(stale.Highest)))
		}
		w.t.log.LogAttrs(ctx, slog.LevelWarn, "fence: stale write refused", logAttrs...)
		return
	}
	w.t.log.LogAttrs(ctx, slog.LevelWarn, "fence: write failed", append(logAttrs, slog.String("error", safeError(err)))...)
}

// Get calls the wrapped Get; outcome found, not_found or error.
func (w *tracedResource) Get(ctx context.Context, name string) ([]byte, fence.Token, error) {
	ctx, c := w.begin(ctx, SpanGet, "get", name)
	value, token, err := w.next.Get(ctx, name)
	switch {
	case err == nil:
		c.end(ctx, OutcomeFound, nil, false, tokenAttr(AttrToken, token))
	case errors.Is(err, fence.ErrNotFound):
		c.end(ctx, OutcomeNotFound, err, false)
	default:
		c.end(ctx, OutcomeError, err, true)
	}
	return value, token, err
}

// Highest calls the wrapped Highest; outcome ok or error, with the token.
func (w *tracedResource) Highest(ctx context.Context, name string) (fence.Token, error) {
	ctx, c := w.begin(ctx, SpanHighest, "highest", name)
	token, err := w.next.Highest(ctx, name)
	if err != nil {
		c.end(ctx, OutcomeError, err, true)
	} else {
		c.end(ctx, OutcomeOK, nil, false, tokenAttr(AttrToken, token))
	}
	return token, err
}
