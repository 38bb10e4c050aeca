// Package fenceotel instruments fence with OpenTelemetry metrics and traces
// and with log/slog records, through a fence.Observer: attach
// Telemetry.Observer to a Locker, and every store call it makes and every
// Session over it is recorded; attach it to a Resource, and its store
// calls are.
//
// It uses only the OpenTelemetry API. Nothing is recorded unless the
// program passes a MeterProvider or TracerProvider in Options or sets the
// global ones (otel.SetMeterProvider, otel.SetTracerProvider), and nothing
// is logged unless Options.Logger is set.
//
//	tel, err := fenceotel.New(&fenceotel.Options{Logger: slog.Default()})
//	locker := memory.New(nil)
//	locker.SetObserver(tel.Observer())
//	sess, err := fence.NewSession(locker, nil) // reports to the locker's observer
//	ledger.SetObserver(tel.Observer())         // a *fence.Resource
//	err = guard.Run(ctx, sess, "nightly-report", fn, nil)
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
//	fence.lock.operation.duration      histogram      s          fence.backend, fence.operation = acquire | acquire_all | renew | release | break | inspect | publish, fence.outcome
//	fence.resource.writes              counter        {write}    fence.backend, fence.operation = put | delete | claim, fence.outcome = accepted | stale | error
//	fence.resource.operation.duration  histogram      s          fence.backend, fence.operation = put | get | delete | highest | claim, fence.outcome
//	fence.resource.duplicates.refused  counter        {attempt}  fence.resource
//
// The first six come from the sessions over an observed Locker, the
// operation durations and writes from each store call of an observed
// Locker or Resource, and fence.resource.duplicates.refused from
// Telemetry.DuplicateRefused. fence.backend is the store's name, as
// Locker.Name and Resource.Name give it ("postgres", "s3"). The lock
// metrics also carry fence.key when Options.KeyAttribute is set (off by
// default: every key would be a time series). Contention is the share of
// busy attempts: rate(attempts{outcome=busy}) / rate(attempts). A
// Prometheus exporter turns the dots into underscores and adds unit and
// _total suffixes: fence_lock_acquire_attempts_total,
// fence_lock_acquire_duration_seconds, fence_resource_writes_total, ...
// The instrumentation scope of the meter and the tracer is
// github.com/fencekit/fence/fenceotel.
//
// Outcomes: acquired, busy, error for acquisition; renewed, not_held,
// error for renewals; released, not_held, error for releases; broken for
// Break; ok for Inspect and Highest; accepted, stale, error for writes;
// found, not_found for Get. Reasons of a loss: not_held (a renewal or the
// release found the lease gone: expired, broken or taken over), deadline
// (the local safety deadline passed while renewals failed), reconcile
// (re-reading the record after an ambiguous renewal showed it gone), error
// (a corrupted record or invalid input).
//
// # Spans
//
//	name                     attributes
//	fence.lock.acquire       fence.backend, fence.key, fence.outcome, fence.token (acquired), fence.holder.token (busy)
//	fence.lock.renew         fence.backend, fence.key, fence.token, fence.outcome
//	fence.lock.release       fence.backend, fence.key, fence.token, fence.outcome
//	fence.lock.break         fence.backend, fence.key, fence.outcome
//	fence.lock.inspect       fence.backend, fence.key, fence.outcome, fence.token (the last issued)
//	fence.lock.acquire_all   fence.backend, fence.key (the first of the set), fence.outcome, fence.token (of the first key)
//	fence.lock.publish       fence.backend, fence.key, fence.token, fence.outcome = published | not_held | error
//	fence.resource.put       fence.backend, fence.resource.key, fence.token, fence.outcome, fence.token.highest (stale)
//	fence.resource.get       fence.backend, fence.resource.key, fence.outcome, fence.token (found)
//	fence.resource.delete    fence.backend, fence.resource.key, fence.token, fence.outcome, fence.token.highest (stale)
//	fence.resource.claim     fence.backend, fence.resource.key, fence.token, fence.outcome, fence.token.highest (stale)
//	fence.resource.highest   fence.backend, fence.resource.key, fence.outcome, fence.token
//
// A span starts in the context the call was given, so it is a child of
// the caller's span, and the store call runs in the span's context. A
// failed call records an "exception" event and an Error status; a busy
// key and a name not found are outcomes, not errors. A stale write is an
// error on its span.
//
// # Logs
//
// With Options.Logger set: Info for acquisitions, breaks and duplicates
// refused; Warn for failed acquire attempts, renewals, releases, breaks
// and writes and for stale writes refused; Error for lost leases; Debug
// for busy attempts, renewals and releases. Records carry the key and the
// token, and those of store calls the backend. They never carry owner ids
// (on Azure an owner id is the lease id, which lets its holder renew or
// release the lease) nor credentials: error texts on spans and in logs
// have owner ids (the lease's and the holder's where the error or event
// names them, and every UUID-shaped id, as fence.NewOwnerID makes them)
// and URL or DSN passwords replaced by [redacted].
package fenceotel
