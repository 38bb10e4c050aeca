package fence

import (
	"context"
	"time"
)

// Observer receives the events of a Locker (Locker.SetObserver), of every
// Session over it, and of a Resource (Resource.SetObserver), for metrics,
// traces and logs; fenceotel builds one. Set the fields you need; nil
// fields are skipped, and a nil *Observer costs one pointer comparison per
// event.
//
// The session calls each function synchronously on its own goroutines, so
// they must be cheap and must not block (count, record a histogram sample,
// log). For one handle the calls never overlap and arrive in this order:
// AcquireAttempt for each attempt of the Lock call that got it,
// Acquired once the lease is held, Renewed for each renewal, LeaseLost at
// most once, Released once. Calls for different handles may overlap.
type Observer struct {
	// Call is called as each call of a Locker or a Resource to its store
	// starts (for a Resource, only Call is used). The context it returns
	// is the one the call runs with (a tracer starts a span in it), and
	// the function it returns is called when the call ends, with its
	// error and a token: the lease's for acquire, renew and release, the
	// last issued for inspect, the value's for get, the highest for
	// highest, the write's for put, delete and claim. Either result may
	// be nil.
	Call func(ctx context.Context, c Call) (context.Context, func(Token, error))
	// AcquireAttempt is called after each Locker.Acquire call with its
	// outcome: Acquired, Busy (held by another owner) or Failed (any other
	// error, carried in Err).
	AcquireAttempt func(AcquireAttemptEvent)
	// Acquired is called once per handle when the lease is held, with the
	// acquisition latency: the time on Clock from the start of the first
	// attempt to the lease.
	Acquired func(AcquiredEvent)
	// Renewed is called after each renewal call: Err is nil when the lease
	// was extended, and the failure otherwise (a transient failure is
	// followed by a reconciling Inspect and a retry; a definitive one by
	// LeaseLost).
	Renewed func(RenewedEvent)
	// LeaseLost is called when the session concludes that the lease is
	// lost, just before it closes the handle's Done channel (or, when only
	// the release reveals the loss, from Release).
	LeaseLost func(LeaseLostEvent)
	// Released is called after the release call with its outcome and how
	// long the lease was held: from acquisition to the end of the release
	// call, on Clock. Err matches ErrNotHeld when the lease was no
	// longer held.
	Released func(ReleasedEvent)
}

// Outcome is the result of one acquisition attempt.
type Outcome int

// Outcomes of an acquisition attempt.
const (
	// Acquired: the attempt got the lease.
	Acquired Outcome = iota + 1
	// Busy: another owner holds the key (the error matches ErrHeld).
	Busy
	// Failed: any other error: invalid input, a corrupted record, a
	// timeout or a store failure.
	Failed
)

// String returns "acquired", "busy" or "failed".
func (o Outcome) String() string {
	switch o {
	case Acquired:
		return "acquired"
	case Busy:
		return "busy"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// AcquireAttemptEvent describes one Locker.Acquire call.
type AcquireAttemptEvent struct {
	Key string
	// Attempt counts the attempts of this Lock call, from 1.
	Attempt int
	Outcome Outcome
	// Err is the attempt's error; nil when Outcome is Acquired.
	Err error
}

// AcquiredEvent describes a lease a session got.
type AcquiredEvent struct {
	Lease Lease
	// Attempts is the number of Acquire calls it took.
	Attempts int
	// Latency is the time from the start of the first attempt to the
	// lease, on Clock.
	Latency time.Duration
}

// RenewedEvent describes one Locker.Renew call.
type RenewedEvent struct {
	// Lease is the lease after the call: with the new ValidUntil when Err
	// is nil, unchanged otherwise.
	Lease Lease
	// Err is nil on success.
	Err error
}

// LeaseLostEvent reports the loss of a lease.
type LeaseLostEvent struct {
	Lease Lease
	// Cause is the *LeaseLostError that Handle.Err returns from now on.
	Cause error
}

// ReleasedEvent describes the release of a lease.
type ReleasedEvent struct {
	Lease Lease
	// Held is the time from acquisition to the end of the release call,
	// on Clock.
	Held time.Duration
	// Err is the release error; nil when the lease was freed.
	Err error
}

func (o *Observer) acquireAttempt(e AcquireAttemptEvent) {
	if o != nil && o.AcquireAttempt != nil {
		o.AcquireAttempt(e)
	}
}

func (o *Observer) acquired(e AcquiredEvent) {
	if o != nil && o.Acquired != nil {
		o.Acquired(e)
	}
}

func (o *Observer) renewed(e RenewedEvent) {
	if o != nil && o.Renewed != nil {
		o.Renewed(e)
	}
}

func (o *Observer) leaseLost(e LeaseLostEvent) {
	if o != nil && o.LeaseLost != nil {
		o.LeaseLost(e)
	}
}

func (o *Observer) released(e ReleasedEvent) {
	if o != nil && o.Released != nil {
		o.Released(e)
	}
}

// Call describes one call of a Locker or a Resource to its store.
type Call struct {
	// Backend is the store's name: "postgres", "s3", ...
	Backend string
	// Op is the operation: "acquire", "acquire_all" (Session.LockAll's
	// one operation for several keys, with the first key as Key),
	// "renew", "release", "break", "inspect", "publish"; or a resource's "put", "get", "delete", "highest",
	// "claim".
	Op string
	// Key is the lock key or resource name.
	Key string
	// Token is the token the call carries: the lease's for renew and
	// release, the write's for put, delete and claim; 0 otherwise.
	Token Token
}

func noEnd(Token, error) {}

// observeCall starts the observation of call c by o.
func observeCall(ctx context.Context, o *Observer, c Call) (context.Context, func(Token, error)) {
	if o == nil || o.Call == nil {
		return ctx, noEnd
	}
	octx, end := o.Call(ctx, c)
	if octx == nil {
		octx = ctx
	}
	if end == nil {
		end = noEnd
	}
	return octx, end
}
