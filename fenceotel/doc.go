// Package fenceotel instruments fence with OpenTelemetry metrics and traces
// and with log/slog records, from the outside: a fence.Observer for the
// events of guards and sessions, and wrappers around any fence.Locker and
// fence.Resource.
//
// It uses only the OpenTelemetry API. Nothing is recorded unless the
// program passes a MeterProvider or TracerProvider in Options or sets the
// global ones (otel.SetMeterProvider, otel.SetTracerProvider), and nothing
// is logged unless Options.Logger is set.
//
//	tel, err := fenceotel.New(&fenceotel.Options{Logger: slog.Default()})
//	locker, _ := tel.WrapLocker(memory.New(nil))
//	g, _ := guard.New(locker, &guard.Options{Observer: tel.Observer()})
//	ledger, _ := tel.WrapResource(store, "ledger")
//
// # Metrics
//
//	name                               instrument     unit       attributes
//	fence.lock.acquire.attempts        counter        {attempt}  fence.outcome = acquired | busy | error
//	fence.lock.acquire.duration        histogram      s          (successful acquisitions, first attempt to lease)
//	fence.lock.hold.duration           histogram      s          fence.outcome = released | not_held | error
//	fence.lock.renewals                counter        {renewal}  fence.outcome = renewed | not_held | error
//	fence.lock.lost                    counter        {lease}    fence.reason = not_held | deadline | reconcile | error
//	fence.lock.held                    updowncounter  {lease}    (leases held now, acquisition to release)
//	fence.lock.operation.duration      histogram      s          fence.operation = acquire | renew | release | break | inspect, fence.outcome
//	fence.resource.writes              counter        {write}    fence.resource, fence.operation = put | delete, fence.outcome = accepted | stale | error
//	fence.resource.operation.duration  histogram      s          fence.resource, fence.operation = put | get | delete | highest, fence.outcome
//	fence.resource.duplicates.refused  counter        {attempt}  fence.resource
//
// The first six come from Telemetry.Observer, fence.lock.operation.duration
// from WrapLocker, the fence.resource metrics from WrapResource, and
// fence.resource.duplicates.refused from Telemetry.DuplicateRefused. The
// lock metrics also carry fence.key when Options.KeyAttribute is set (off
// by default: every key would be a time series). Contention is the share
// of busy attempts: rate(attempts{outcome=busy}) / rate(attempts).
// A Prometheus exporter turns the dots into underscores and adds unit and
// _total suffixes: fence_lock_acquire_attempts_total,
// fence_lock_acquire_duration_seconds, fence_resource_writes_total, ...
//
// Outcomes: acquired, busy, error for acquisition; renewed, not_held,
// error for renewals; released, not_held, error for releases; broken for
// Break; held, free for Inspect; accepted, stale, error for writes; found,
// not_found for Get; ok for Highest. Reasons of a loss: not_held (a
// renewal or the release found the lease gone: expired, broken or taken
// over), deadline (the local safety deadline passed while renewals
// failed), reconcile (re-reading the record after an ambiguous renewal
// showed it gone), error (a corrupted record or invalid input).
//
// # Spans
//
//	name                     attributes
//	fence.lock.acquire       fence.key, fence.outcome, fence.token (acquired), fence.holder.token (busy)
//	fence.lock.renew         fence.key, fence.token, fence.outcome
//	fence.lock.release       fence.key, fence.token, fence.outcome
//	fence.lock.break         fence.key, fence.outcome
//	fence.lock.inspect       fence.key, fence.outcome, fence.held, fence.token (last issued)
//	fence.resource.put       fence.resource, fence.resource.key, fence.token, fence.outcome, fence.token.highest (stale)
//	fence.resource.get       fence.resource, fence.resource.key, fence.outcome, fence.token (found)
//	fence.resource.delete    fence.resource, fence.resource.key, fence.token, fence.outcome, fence.token.highest (stale)
//	fence.resource.highest   fence.resource, fence.resource.key, fence.token, fence.outcome
//
// A failed call records an "exception" event and an Error status; a busy
// key and a name not found are outcomes, not errors. A stale write is an
// error on its span.
//
// # Logs
//
// With Options.Logger set: Info for acquisitions, breaks and duplicates
// refused; Warn for failed acquire attempts, renewals, releases and writes
// and for stale writes refused; Error for lost leases; Debug for busy
// attempts, renewals and releases. Records carry the key, the token and
// the resource name. They never carry owner ids (on Azure an owner id is
// the lease id, which lets its holder renew or release the lease) nor
// credentials: error texts on spans and in logs have owner ids, UUID-shaped
// ids and URL or DSN passwords replaced by [redacted].
package fenceotel
