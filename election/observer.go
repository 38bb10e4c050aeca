package election

import "github.com/fencekit/fence"

// Observer receives a candidate's events, for metrics, logs and tests. Set
// the fields you need; nil fields are skipped. The candidate calls them
// synchronously, so they must be cheap and must not block. For one
// candidate they never overlap and come in order: Elected, then Demoted
// for the same term before the next Elected; Failed may come at any time.
// Lease-level events (each attempt, renewal, loss and release) come from
// Options.Guard.Observer.
type Observer struct {
	// Elected is called when the candidate becomes leader, before its
	// function starts, with the term's lock.
	Elected func(ElectedEvent)
	// Demoted is called when the candidate stops being leader: as soon as
	// the leader's context is cancelled, or when its function returns.
	Demoted func(DemotedEvent)
	// Failed is called when an attempt to take the key fails for a reason
	// other than a busy key (a store error; the candidate retries), and
	// when a leader's function returns an error other than its context's.
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

// FailedEvent reports an error that did not stop the campaign.
type FailedEvent struct {
	// Term is the lock of the term whose function failed; nil when an
	// attempt to take the key failed.
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
