package fenceotel

import (
	"context"
	"errors"
	"log/slog"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Options configure a Telemetry. A nil *Options, and every zero field, means
// the documented default.
type Options struct {
	// MeterProvider creates the instruments. Default:
	// otel.GetMeterProvider(), which records nothing until the program
	// sets a global provider.
	MeterProvider metric.MeterProvider
	// TracerProvider creates the spans of the store calls. Default:
	// otel.GetTracerProvider(), a no-op until the program sets a global
	// provider.
	TracerProvider trace.TracerProvider
	// Logger receives log records of acquisitions, renew failures, losses,
	// breaks and stale writes. Default: nil, which logs nothing. Records
	// carry the key and token, never owner ids (which some stores use as
	// lease ids) and never credentials: error texts are redacted.
	Logger *slog.Logger
	// KeyAttribute adds the lock key (fence.key) to the lock metrics.
	// Off by default: every distinct key makes a new time series, so turn
	// it on only for a small, fixed set of keys. Spans always carry the
	// key.
	KeyAttribute bool
}

// Telemetry records fence's metrics, spans and logs for one set of
// Options. Create it with New and attach its Observer to lockers and
// resources; it is safe for concurrent use, and one Telemetry may serve
// many of them.
type Telemetry struct {
	tracer  trace.Tracer
	log     *slog.Logger
	withKey bool

	acquireAttempts metric.Int64Counter
	acquireDuration metric.Float64Histogram
	holdDuration    metric.Float64Histogram
	renewals        metric.Int64Counter
	lost            metric.Int64Counter
	held            metric.Int64UpDownCounter
	lockOpDuration  metric.Float64Histogram
	writes          metric.Int64Counter
	resOpDuration   metric.Float64Histogram
	duplicates      metric.Int64Counter
}

// Bucket boundaries, in seconds, advised to the SDK for the histograms.
var (
	// callBuckets suit store calls and acquisition waits.
	callBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	// holdBuckets suit critical sections, from milliseconds to hours.
	holdBuckets = []float64{0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600, 4 * 3600}
)

// New creates the instruments and the tracer. opts may be nil. It returns
// an error only when the MeterProvider refuses an instrument; the
// Telemetry it returns with that error still works, without the refused
// instruments' data.
func New(opts *Options) (*Telemetry, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	mp, tp := o.MeterProvider, o.TracerProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	m := mp.Meter(scopeName)
	t := &Telemetry{tracer: tp.Tracer(scopeName), log: o.Logger, withKey: o.KeyAttribute}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string, buckets []float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return h
	}
	t.acquireAttempts = counter(MetricAcquireAttempts, "{attempt}", "Lock acquisition attempts by outcome (acquired, busy, error).")
	t.acquireDuration = histogram(MetricAcquireDuration, "Time from the first acquisition attempt to the lease.", callBuckets)
	t.holdDuration = histogram(MetricHoldDuration, "Time a lease was held, from acquisition to the end of its release.", holdBuckets)
	t.renewals = counter(MetricRenewals, "{renewal}", "Lease renewals by outcome (renewed, not_held, error).")
	t.lost = counter(MetricLost, "{lease}", "Leases lost while work ran, by reason (not_held, deadline, reconcile, error).")
	held, err := m.Int64UpDownCounter(MetricHeld, metric.WithUnit("{lease}"), metric.WithDescription("Leases held now."))
	errs = append(errs, err)
	t.held = held
	t.lockOpDuration = histogram(MetricLockOperationDuration, "Duration of locker calls by backend, operation and outcome.", callBuckets)
	t.writes = counter(MetricResourceWrites, "{write}", "Fenced writes by backend, operation and outcome (accepted, stale, error).")
	t.resOpDuration = histogram(MetricResourceOperationDuration, "Duration of resource calls by backend, operation and outcome.", callBuckets)
	t.duplicates = counter(MetricDuplicatesRefused, "{attempt}", "Duplicate attempts refused by a constraint of the protected store.")
	return t, errors.Join(errs...)
}

// DuplicateRefused counts one duplicate attempt that a constraint of the
// protected store refused (for example a unique index on an idempotency
// key, the ledger example's second layer of defence), under
// fence.resource.duplicates.refused with fence.resource = resource, and
// logs it at Info. resource names the store, from a small fixed set.
func (t *Telemetry) DuplicateRefused(ctx context.Context, resource string) {
	t.duplicates.Add(ctx, 1, metric.WithAttributes(attribute.String(attrResource, resource)))
	if t.log != nil {
		t.log.LogAttrs(ctx, slog.LevelInfo, "fence: duplicate refused by a constraint", slog.String("resource", resource))
	}
}

// metricKey returns the key attribute when Options.KeyAttribute is set.
func (t *Telemetry) metricKey(key string, attrs ...attribute.KeyValue) []attribute.KeyValue {
	if t.withKey {
		attrs = append(attrs, attribute.String(attrKey, key))
	}
	return attrs
}
