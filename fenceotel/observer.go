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

// Observer returns a new fence.Observer that records everything this
// package does: the spans and per-call metrics of the store calls
// (Observer.Call) and the metrics and logs of the sessions' leases (its
// other fields). Attach it to each Locker and Resource to instrument:
//
//	locker.SetObserver(tel.Observer()) // its calls and every Session over it
//	ledger.SetObserver(tel.Observer()) // a Resource uses Call only
//
// Each call returns a new Observer, whose fields a program may wrap or
// replace before attaching it. One Telemetry may serve many lockers and
// resources.
//
// Log levels: Debug for busy attempts, renewals and releases; Info for
// acquisitions and breaks; Warn for failed attempts, renewals, releases,
// breaks and writes, and for stale writes refused; Error for lost leases.
func (t *Telemetry) Observer() *fence.Observer {
	return &fence.Observer{
		Call:           t.call,
		AcquireAttempt: t.acquireAttempt,
		Acquired:       t.acquired,
		Renewed:        t.renewed,
		LeaseLost:      t.leaseLost,
		Released:       t.released,
	}
}

// The session's events carry no context: metrics are recorded with a
// background one.
var bg = context.Background()

func (t *Telemetry) acquireAttempt(e fence.AcquireAttemptEvent) {
	outcome := outcomeError
	switch e.Outcome {
	case fence.Acquired:
		outcome = outcomeAcquired
	case fence.Busy:
		outcome = outcomeBusy
	}
	t.acquireAttempts.Add(bg, 1, metric.WithAttributes(t.metricKey(e.Key, attribute.String(attrOutcome, outcome))...))
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
	outcome := heldOutcome(e.Err, outcomeRenewed)
	t.renewals.Add(bg, 1, metric.WithAttributes(t.metricKey(e.Lease.Key, attribute.String(attrOutcome, outcome))...))
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
		return reasonDeadline
	case errors.As(cause, new(*fence.ReconcileError)):
		return reasonReconcile
	case errors.Is(cause, fence.ErrNotHeld):
		return reasonNotHeld
	default:
		return reasonError
	}
}

func (t *Telemetry) leaseLost(e fence.LeaseLostEvent) {
	reason := lostReason(e.Cause)
	t.lost.Add(bg, 1, metric.WithAttributes(t.metricKey(e.Lease.Key, attribute.String(attrReason, reason))...))
	if t.log != nil {
		t.log.LogAttrs(bg, slog.LevelError, "fence: lease lost", append(leaseAttrs(e.Lease),
			slog.String("reason", reason), slog.String("error", safeError(e.Cause, e.Lease.Owner)))...)
	}
}

func (t *Telemetry) released(e fence.ReleasedEvent) {
	outcome := heldOutcome(e.Err, outcomeReleased)
	t.holdDuration.Record(bg, e.Held.Seconds(), metric.WithAttributes(t.metricKey(e.Lease.Key, attribute.String(attrOutcome, outcome))...))
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
