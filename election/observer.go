package election

import "github.com/fencekit/fence"

// Observer receives a candidate's events, for metrics, logs and tests:
// what the lease events of its session's Locker do not tell. Set the
// fields you need; nil fields are skipped. The candidate calls them
// synchronously, so they must be cheap and must not block. For one
// candidate they never overlap and come in order: Elected, then Demoted
// for the same term before the next Elected, and Failed, if the term's
// function failed, after its Demoted.
// The lease events (each attempt, including those that failed with a
// store error, each renewal, the loss and the release) go to the
// observer of the session's Locker (fence.Locker.SetObserver).
type Observer struct {
	// Elected is called when the candidate becomes leader, with the
	// term's lock: once the term's value (Options.Value) is published,
	// before the leader's function starts.
	Elected func(ElectedEvent)
	// Demoted is called when the candidate stops being leader: as soon as
	// the leader's context is cancelled, or when its function returns.
	Demoted func(DemotedEvent)
	// Failed is called when a leader's function returns an error other
	// than its context's (Campaign goes on and does not return it).
	Failed func(FailedEvent)
}

// ElectedEvent reports the start of a term.
type ElectedEvent struct {
	// Term is the term's lock, the same handle the leader's function
	// gets; Term.Token() fences the leader's writes.
	Term *fence.Handle
}

// DemotedEvent reports the end of a term.
type DemotedEvent struct {
	// Term is the term's lock; Term.Lease() is the lease as last renewed.
	// The lease may still be held when the event comes: it is released
	// when the leader's function returns.
	Term *fence.Handle
	// Cause says why: a *fence.LeaseLostError, ErrResigned, ErrReturned,
	// or the cause of the campaign's context.
	Cause error
}

// FailedEvent reports the error of a leader's function.
type FailedEvent struct {
	// Term is the lock of the term whose function failed.
	Term *fence.Handle
	Err  error
}

func (o *Observer) elected(e ElectedEvent) {
	if o != nil && o.Elected != nil {
		o.Elected(e)
	}
}

func (o *Observer) demoted(e DemotedEvent) {
	if o != nil && o.Demoted != nil {
		o.Demoted(e)
	}
}

func (o *Observer) failed(e FailedEvent) {
	if o != nil && o.Failed != nil {
		o.Failed(e)
	}
}
