package fenceotel

// Metric names, for the views of an OpenTelemetry SDK (other histogram
// buckets, a metric dropped or renamed). Units follow OpenTelemetry
// conventions: "s" for durations, a {curly} annotation for counts. The
// package doc lists their attributes.
const (
	// MetricAcquireAttempts counts the Locker.Acquire calls of sessions,
	// by fence.outcome: acquired, busy or error. Unit {attempt}.
	MetricAcquireAttempts = "fence.lock.acquire.attempts"
	// MetricAcquireDuration is the time from the start of a lock call's
	// first attempt to the lease, for acquisitions that succeeded. Unit s.
	MetricAcquireDuration = "fence.lock.acquire.duration"
	// MetricHoldDuration is the time a lease was held: from acquisition to
	// the end of its release call, by fence.outcome of the release:
	// released, not_held or error. Unit s.
	MetricHoldDuration = "fence.lock.hold.duration"
	// MetricRenewals counts the renewal calls of sessions, by
	// fence.outcome: renewed, not_held or error. Unit {renewal}.
	MetricRenewals = "fence.lock.renewals"
	// MetricLost counts leases lost while work ran, by fence.reason:
	// not_held, deadline, reconcile or error. Unit {lease}.
	MetricLost = "fence.lock.lost"
	// MetricHeld is the number of leases the sessions hold now, from
	// acquisition to the end of the release call. Unit {lease}.
	MetricHeld = "fence.lock.held"
	// MetricLockOperationDuration is the duration of each store call of
	// a Locker, by fence.backend, fence.operation and fence.outcome.
	// Unit s.
	MetricLockOperationDuration = "fence.lock.operation.duration"
	// MetricResourceWrites counts the Put, Delete and Claim calls of a
	// Resource, by fence.backend, fence.operation and fence.outcome:
	// accepted, stale or error. Unit {write}.
	MetricResourceWrites = "fence.resource.writes"
	// MetricResourceOperationDuration is the duration of each store call
	// of a Resource, by fence.backend, fence.operation and fence.outcome.
	// Unit s.
	MetricResourceOperationDuration = "fence.resource.operation.duration"
	// MetricDuplicatesRefused counts duplicate attempts that a constraint
	// of the protected store refused (see Telemetry.DuplicateRefused), by
	// fence.resource. Unit {attempt}.
	MetricDuplicatesRefused = "fence.resource.duplicates.refused"
)

// scopeName is the instrumentation scope of the meter and the tracer.
const scopeName = "github.com/fencekit/fence/fenceotel"

// Attribute keys.
const (
	// attrKey is the lock key: always on spans; on metrics only with
	// Options.KeyAttribute, because keys can be unbounded.
	attrKey = "fence.key"
	// attrBackend is the store's name (fence.Call.Backend): "postgres".
	attrBackend = "fence.backend"
	// attrToken is the fencing token (an int64; a string for tokens above
	// the int64 range). On spans only.
	attrToken = "fence.token"
	// attrHighestToken is the highest token a resource had accepted, on
	// the span of a write refused as stale, where the resource said it.
	attrHighestToken = "fence.token.highest"
	// attrHolderToken is the token of the current holder, on the span of
	// an acquire that found the key busy, where the store said it.
	attrHolderToken = "fence.holder.token"
	attrOutcome     = "fence.outcome"
	attrReason      = "fence.reason"
	attrOperation   = "fence.operation"
	// attrResource names the protected store given to DuplicateRefused.
	attrResource = "fence.resource"
	// attrResourceKey is the key written within a resource. On spans only.
	attrResourceKey = "fence.resource.key"
)

// Values of attrOutcome and attrReason.
const (
	outcomeAcquired  = "acquired"
	outcomeBusy      = "busy"
	outcomeError     = "error"
	outcomeRenewed   = "renewed"
	outcomeNotHeld   = "not_held"
	outcomeReleased  = "released"
	outcomePublished = "published"
	outcomeBroken    = "broken"
	outcomeAccepted  = "accepted"
	outcomeStale     = "stale"
	outcomeFound     = "found"
	outcomeNotFound  = "not_found"
	outcomeOK        = "ok"

	reasonNotHeld   = "not_held"
	reasonDeadline  = "deadline"
	reasonReconcile = "reconcile"
	reasonError     = "error"
)
