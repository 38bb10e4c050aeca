package fenceotel

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/fencekit/fence"
)

// Observer returns a fence.Observer that records the metrics of a
// session's leases (fence.lock.acquire.attempts,
// fence.lock.acquire.duration, fence.lock.hold.duration,
// fence.lock.renewals, fence.lock.lost, fence.lock.held) and logs their
// events. Set it as guard.Options.Observer (guard.Observer is the same
// type) or fence.SessionOptions.Observer. One Observer may serve many
// guards and sessions.
//
// Log levels: Debug for busy attempts, renewals and releases; Info for
// acquisitions; Warn for failed attempts, renewals and releases; Error for
// lost leases.
func (t *Telemetry) Observer() *fence.Observer {
	return &fence.Observer{
		AcquireAttempt: t.acquireAttempt,
		Acquired:       t.acquired,
		Renewed:        t.renewed,
		LeaseLost:      t.leaseLost,
		Released:       t.released,
	}
}

// Observer is New followed by Telemetry.Observer, for a program that only
// needs the metrics and logs of its guards or sessions.
func Observer(opts *Options) (*fence.Observer, error) {
	t, err := New(opts)
	return t.Observer(), err
}

// The session's events carry no context: metrics are recorded with a
// background one.
var bg = context.Background()

func (t *Telemetry) acquireAttempt(e fence.AcquireAttemptEvent) {
	outcome := OutcomeError
	switch e.Outcome {
	case fence.Acquired:
		outcome = OutcomeAcquired
	case fence.Busy:
		outcome = OutcomeBusy
	}
	t.acquireAttempts.Add(bg, 1, metric.WithAttributes(t.metricKey(e.Key, attribute.String(AttrOutcome, outcome))...))
	if t.log == nil {
		return
	}
	switch e.Outcome {
	case fence.Busy:
		t.log.LogAttrs(bg, slog.LevelDebug, "fence: lock busy", slog.String("key", e.Key), slog.Int("attempt", e.Attempt))
	case fence.Failed:
		t.log.LogAttrs(bg, slog.LevelWarn, "fence: acquire failed", slog.String("key", e.Key), slog.Int("attempt", e.Attempt),
			slog.String("error", safeError(e.Err)))
	}
}

func (t *Telemetry) acquired(e fence.AcquiredEvent) {
	attrs := metric.WithAttributes(t.metricKey(e.Lease.Key)...)
	t.acquireDuration.Record(bg, e.Latency.Seconds(), attrs)
	t.held.Add(bg, 1, attrs)
	if t.log != nil {
		t.log.LogAttrs(bg, slog.LevelInfo, "fence: lease acquired", slog.String("key", e.Lease.Key),
			slog.Uint64("token", uint64(e.Lease.Token)), slog.Int("attempts", e.Attempts), slog.Duration("latency", e.Latency))
	}
}

func (t *Telemetry) renewed(e fence.RenewedEvent) {
	outcome := OutcomeRenewed
	switch {
	case e.Err == nil:
	case errors.Is(e.Err, fence.ErrNotHeld):
		outcome = OutcomeNotHeld
	default:
		outcome = OutcomeError
	}
	t.renewals.Add(bg, 1, metric.WithAttributes(t.metricKey(e.Lease.Key, attribute.String(AttrOutcome, outcome))...))
	if t.log == nil {
		return
	}
	if e.Err == nil {
		t.log.LogAttrs(bg, slog.LevelDebug, "fence: lease renewed", leaseAttrs(e.Lease)...)
		return
	}
	t.log.LogAttrs(bg, slog.LevelWarn, "fence: renew failed",
		append(leaseAttrs(e.Lease), slog.String("error", safeError(e.Err, e.Lease.Owner)))...)
}

// lostReason classifies the cause of a lost lease.
func lostReason(cause error) string {
	switch {
	case errors.Is(cause, fence.ErrDeadlinePassed):
		return ReasonDeadline
	case errors.As(cause, new(*fence.ReconcileError)):
		return ReasonReconcile
	case errors.Is(cause, fence.ErrNotHeld):
		return ReasonNotHeld
	default:
		return ReasonError
	}
}

func (t *Telemetry) leaseLost(e fence.LeaseLostEvent) {
	reason := lostReason(e.Cause)
	t.lost.Add(bg, 1, metric.WithAttributes(t.metricKey(e.Lease.Key, attribute.String(AttrReason, reason))...))
	if t.log != nil {
		t.log.LogAttrs(bg, slog.LevelError, "fence: lease lost", append(leaseAttrs(e.Lease),
			slog.String("reason", reason), slog.String("error", safeError(e.Cause, e.Lease.Owner)))...)
	}
}

func (t *Telemetry) released(e fence.ReleasedEvent) {
	outcome := OutcomeReleased
	switch {
	case e.Err == nil:
	case errors.Is(e.Err, fence.ErrNotHeld):
		outcome = OutcomeNotHeld
	default:
		outcome = OutcomeError
	}
	t.holdDuration.Record(bg, e.Held.Seconds(), metric.WithAttributes(t.metricKey(e.Lease.Key, attribute.String(AttrOutcome, outcome))...))
	t.held.Add(bg, -1, metric.WithAttributes(t.metricKey(e.Lease.Key)...))
	if t.log == nil {
		return
	}
	attrs := append(leaseAttrs(e.Lease), slog.Duration("held", e.Held.Round(time.Microsecond)))
	if e.Err == nil {
		t.log.LogAttrs(bg, slog.LevelDebug, "fence: lease released", attrs...)
		return
	}
	t.log.LogAttrs(bg, slog.LevelWarn, "fence: release failed", append(attrs, slog.String("error", safeError(e.Err, e.Lease.Owner)))...)
}

// leaseAttrs are the log attributes of a lease: key and token, never the
// owner.
func leaseAttrs(l fence.Lease) []slog.Attr {
	return []slog.Attr{slog.String("key", l.Key), slog.Uint64("token", uint64(l.Token))}
}
