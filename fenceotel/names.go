package fenceotel

// Metric names. Units follow OpenTelemetry conventions: "s" for durations,
// a {curly} annotation for counts.
const (
	// MetricAcquireAttempts counts Locker.Acquire calls made by a session
	// (a guard's, or one used directly), by fence.outcome: acquired, busy
	// or error. Unit {attempt}.
	MetricAcquireAttempts = "fence.lock.acquire.attempts"
	// MetricAcquireDuration is the time from the start of a lock call's
	// first attempt to the lease, for acquisitions that succeeded. Unit s.
	MetricAcquireDuration = "fence.lock.acquire.duration"
	// MetricHoldDuration is the time a lease was held: from acquisition to
	// the end of its release call, by fence.outcome of the release:
	// released, not_held or error. Unit s.
	MetricHoldDuration = "fence.lock.hold.duration"
	// MetricRenewals counts renewal calls, by fence.outcome: renewed,
	// not_held or error. Unit {renewal}.
	MetricRenewals = "fence.lock.renewals"
	// MetricLost counts leases lost while work ran, by fence.reason:
	// not_held, deadline, reconcile or error. Unit {lease}.
	MetricLost = "fence.lock.lost"
	// MetricHeld is the number of leases the sessions hold now, from
	// acquisition to the end of the release call. Unit {lease}.
	MetricHeld = "fence.lock.held"
	// MetricLockOperationDuration is the duration of each call through a
	// wrapped Locker, by fence.operation and fence.outcome. Unit s.
	MetricLockOperationDuration = "fence.lock.operation.duration"
	// MetricResourceWrites counts Put and Delete calls through a wrapped
	// Resource, by fence.resource, fence.operation and fence.outcome:
	// accepted, stale or error. Unit {write}.
	MetricResourceWrites = "fence.resource.writes"
	// MetricResourceOperationDuration is the duration of each call through
	// a wrapped Resource, by fence.resource, fence.operation and
	// fence.outcome. Unit s.
	MetricResourceOperationDuration = "fence.resource.operation.duration"
	// MetricDuplicatesRefused counts duplicate attempts that a constraint
	// of the protected store refused (see Telemetry.DuplicateRefused), by
	// fence.resource. Unit {attempt}.
	MetricDuplicatesRefused = "fence.resource.duplicates.refused"
)

// Attribute keys.
const (
	// AttrKey is the lock key. Always on spans; on metrics only when
	// Options.KeyAttribute is set, because keys can be unbounded.
	AttrKey = "fence.key"
	// AttrToken is the fencing token (an int64; a string for tokens above
	// the int64 range). On spans only.
	AttrToken = "fence.token"
	// AttrHighestToken is the highest token a resource had accepted, on
	// the span of a write refused as stale, where the resource said it.
	AttrHighestToken = "fence.token.highest"
	// AttrHolderToken is the token of the current holder, on the span of
	// an Acquire that found the key busy, where the locker said it.
	AttrHolderToken = "fence.holder.token"
	// AttrHeld is whether Inspect found the key held, on its span.
	AttrHeld = "fence.held"
	// AttrOutcome is the outcome of an operation (values per metric).
	AttrOutcome = "fence.outcome"
	// AttrReason is why a lease was lost.
	AttrReason = "fence.reason"
	// AttrOperation names the call: acquire, renew, release, break,
	// inspect; put, get, delete, highest.
	AttrOperation = "fence.operation"
	// AttrResource is the name given to WrapResource (or DuplicateRefused)
	// for the protected store: a small, fixed set chosen by the program.
	AttrResource = "fence.resource"
	// AttrResourceKey is the name written within a resource (the name
	// argument of Put, Get, Delete, Highest). On spans only.
	AttrResourceKey = "fence.resource.key"
)

// Values of AttrOutcome and AttrReason.
const (
	OutcomeAcquired = "acquired"
	OutcomeBusy     = "busy"
	OutcomeError    = "error"
	OutcomeRenewed  = "renewed"
	OutcomeNotHeld  = "not_held"
	OutcomeReleased = "released"
	OutcomeBroken   = "broken"
	OutcomeHeld     = "held"
	OutcomeFree     = "free"
	OutcomeAccepted = "accepted"
	OutcomeStale    = "stale"
	OutcomeFound    = "found"
	OutcomeNotFound = "not_found"
	OutcomeOK       = "ok"

	ReasonNotHeld   = "not_held"
	ReasonDeadline  = "deadline"
	ReasonReconcile = "reconcile"
	ReasonError     = "error"
)

// Span names: fence.lock.<operation> for a wrapped Locker,
// fence.resource.<operation> for a wrapped Resource.
const (
	SpanAcquire = "fence.lock.acquire"
	SpanRenew   = "fence.lock.renew"
	SpanRelease = "fence.lock.release"
	SpanBreak   = "fence.lock.break"
	SpanInspect = "fence.lock.inspect"
	SpanPut     = "fence.resource.put"
	SpanGet     = "fence.resource.get"
	SpanDelete  = "fence.resource.delete"
	SpanHighest = "fence.resource.highest"
	SpanClaim   = "fence.resource.claim"
)

// ScopeName is the instrumentation scope of the meter and tracer.
const ScopeName = "github.com/fencekit/fence/fenceotel"
