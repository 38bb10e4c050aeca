package fenceotel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// tracedLocker is a fence.Locker with spans, metrics and logs around each
// call of the Locker it wraps.
type tracedLocker struct {
	t    *Telemetry
	next fence.Locker
}

var _ fence.Locker = (*tracedLocker)(nil)

// WrapLocker returns a fence.Locker that calls l and, around each call,
// starts a span (fence.lock.acquire, .renew, .release, .break, .inspect)
// carrying fence.key, fence.token where known and fence.outcome, and
// records fence.lock.operation.duration by fence.operation and
// fence.outcome. Errors are recorded on the span with their text
// redacted; a busy key is an outcome (busy), not a span error. Break is
// logged at Info. A nil l gets an error matching fence.ErrInvalid.
//
// The wrapper keeps what a fence.Session uses of l beyond the Locker
// methods: renewals in batches (RenewMany) and release notices
// (NotifyRelease), so that sessions over it renew as many leases per call
// and wake waiting Locks as they would over l.
//
// The metrics of guards and sessions come from Observer; WrapLocker adds
// the per-call view and the spans, which become children of the span in
// the caller's context.
func (t *Telemetry) WrapLocker(l fence.Locker) (fence.Locker, error) {
	if l == nil {
		return nil, &fence.InvalidError{Field: "locker", Reason: "nil"}
	}
	return &tracedLocker{t: t, next: l}, nil
}

// WrapLocker is New followed by Telemetry.WrapLocker.
func WrapLocker(l fence.Locker, opts *Options) (fence.Locker, error) {
	t, err := New(opts)
	w, werr := t.WrapLocker(l)
	if werr != nil {
		return nil, werr
	}
	return w, err
}

func (w *tracedLocker) begin(ctx context.Context, name, op, key string, attrs ...attribute.KeyValue) (context.Context, *call) {
	return w.t.begin(ctx, name, w.t.lockOpDuration,
		w.t.metricKey(key, attribute.String(AttrOperation, op)),
		append(attrs, attribute.String(AttrKey, key))...)
}

// Acquire calls the wrapped Acquire; outcome acquired, busy or error.
func (w *tracedLocker) Acquire(ctx context.Context, key string, ttl time.Duration, opts *fence.AcquireOptions) (fence.Lease, error) {
	ctx, c := w.begin(ctx, SpanAcquire, "acquire", key)
	lease, err := w.next.Acquire(ctx, key, ttl, opts)
	switch held, busy := errors.AsType[*fence.HeldError](err); {
	case err == nil:
		c.end(ctx, OutcomeAcquired, nil, false, tokenAttr(AttrToken, lease.Token))
	case busy:
		var attrs []attribute.KeyValue
		if held.Token != 0 {
			attrs = append(attrs, tokenAttr(AttrHolderToken, held.Token))
		}
		c.end(ctx, OutcomeBusy, err, false, attrs...)
	default:
		c.end(ctx, OutcomeError, err, true)
	}
	return lease, err
}

// Renew calls the wrapped Renew; outcome renewed, not_held or error.
func (w *tracedLocker) Renew(ctx context.Context, lease fence.Lease) (fence.Lease, error) {
	ctx, c := w.begin(ctx, SpanRenew, "renew", lease.Key, tokenAttr(AttrToken, lease.Token))
	c.owner = lease.Owner
	renewed, err := w.next.Renew(ctx, lease)
	c.end(ctx, heldOutcome(err, OutcomeRenewed), err, true)
	return renewed, err
}

// RenewMany renews leases, as a fence.Session's keepalive asks once per
// round: with one RenewMany call of the wrapped Locker where it has one
// (a fence.Locker, which batches them on stores that renew many
// leases in one call), and one Renew call each otherwise. Each lease gets
// its own span and duration sample, as with Renew; in a batch they all
// cover the one call that renewed them.
func (w *tracedLocker) RenewMany(ctx context.Context, leases []fence.Lease) ([]fence.Lease, []error) {
	m, ok := w.next.(fence.ManyRenewer)
	if !ok {
		return fence.RenewEach(ctx, w, leases)
	}
	calls := make([]*call, len(leases))
	for i, lease := range leases {
		_, calls[i] = w.begin(ctx, SpanRenew, "renew", lease.Key, tokenAttr(AttrToken, lease.Token))
		calls[i].owner = lease.Owner
	}
	out, errs := m.RenewMany(ctx, leases)
	for i, c := range calls {
		var err error
		if i < len(errs) {
			err = errs[i]
		}
		c.end(ctx, heldOutcome(err, OutcomeRenewed), err, true)
	}
	return out, errs
}

// NotifyRelease passes on the wrapped Locker's NotifyRelease, so that a
// fence.Session's Lock over the wrapper still wakes when the store
// announces a release; it returns an error matching errors.ErrUnsupported
// when the wrapped Locker has none. It records nothing.
func (w *tracedLocker) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	n, ok := w.next.(driver.ReleaseNotifier)
	if !ok {
		return nil, nil, fmt.Errorf("fenceotel: notify %q: %w", key, errors.ErrUnsupported)
	}
	return n.NotifyRelease(ctx, key)
}

// Release calls the wrapped Release; outcome released, not_held or error.
func (w *tracedLocker) Release(ctx context.Context, lease fence.Lease) error {
	ctx, c := w.begin(ctx, SpanRelease, "release", lease.Key, tokenAttr(AttrToken, lease.Token))
	c.owner = lease.Owner
	err := w.next.Release(ctx, lease)
	c.end(ctx, heldOutcome(err, OutcomeReleased), err, true)
	return err
}

// Break calls the wrapped Break; outcome broken or error. A break is an
// operator action and is logged at Info (or Warn when it failed).
func (w *tracedLocker) Break(ctx context.Context, key string) error {
	ctx, c := w.begin(ctx, SpanBreak, "break", key)
	err := w.next.Break(ctx, key)
	if err == nil {
		c.end(ctx, OutcomeBroken, nil, false)
	} else {
		c.end(ctx, OutcomeError, err, true)
	}
	if w.t.log != nil {
		if err == nil {
			w.t.log.LogAttrs(ctx, slog.LevelInfo, "fence: lock broken", slog.String("key", key))
		} else {
			w.t.log.LogAttrs(ctx, slog.LevelWarn, "fence: break failed", slog.String("key", key), slog.String("error", safeError(err)))
		}
	}
	return err
}

// Inspect calls the wrapped Inspect; outcome held, free or error, with
// the last token issued and fence.held on the span.
func (w *tracedLocker) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	ctx, c := w.begin(ctx, SpanInspect, "inspect", key)
	info, err := w.next.Inspect(ctx, key)
	switch {
	case err != nil:
		c.end(ctx, OutcomeError, err, true)
	case info.Held:
		c.end(ctx, OutcomeHeld, nil, false, attribute.Bool(AttrHeld, true), tokenAttr(AttrToken, info.Token))
	default:
		c.end(ctx, OutcomeFree, nil, false, attribute.Bool(AttrHeld, false), tokenAttr(AttrToken, info.Token))
	}
	return info, err
}

// heldOutcome is ok when err is nil, not_held when err matches
// fence.ErrNotHeld, error otherwise.
func heldOutcome(err error, ok string) string {
	switch {
	case err == nil:
		return ok
	case errors.Is(err, fence.ErrNotHeld):
		return OutcomeNotHeld
	default:
		return OutcomeError
	}
}
