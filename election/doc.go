// Package election elects one leader among candidates that share a key,
// and keeps electing one for as long as they campaign. Each candidate
// takes its terms through the application's fence.Session, with the
// session's lease settings, the way etcd's concurrency.NewElection takes
// a session.
//
// Each candidate campaigns in a loop: it tries once to take the key
// (guard.Run); the winner is the leader for as long as its lease lives,
// and the others retry every RetryInterval (jittered) until the key is
// free again. A term ends when the lease is lost (the leader's context is
// cancelled with a *fence.LeaseLostError), when the leader resigns
// (Resign), when the leader's function returns, or when the campaign's
// context ends; the lease is then released at once, so another candidate
// takes over without waiting for it to expire.
//
//	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 10 * time.Second})
//	...
//	err = election.Run(ctx, sess, "scheduler-leader", func(ctx context.Context, term *fence.Handle) error {
//		// Lead until ctx is done. Every write carries term.Token().
//		return dispatch(ctx, term.Token())
//	}, nil)
//
// A term is a *fence.Handle: the leader's function gets it, Leader and the
// Elected and Demoted events hand out the same one, and the session keeps
// it current while it renews the lease.
//
// # Leadership is not a safety guarantee
//
// Being elected means that this candidate held the lease a moment ago. It
// does not mean that no other candidate is leading now: a leader can pause
// (garbage collection, VM migration, a partition) after its last renewal
// and wake up after its lease expired and another candidate was elected;
// an operator's Break makes a new leader before the old one's next renewal
// notices. For a while two candidates may then believe they lead. IsLeader
// and the Elected and Demoted events are for efficiency and observability
// only. Safety comes from the token: every term gets a Token higher than
// every earlier term's, and each write the leader makes to a protected
// resource must carry it (see fence.Resource), so a deposed leader's late
// writes are refused.
//
// # Demotion
//
// The leader's function gets a context that is cancelled when its term
// ends; context.Cause tells why:
//
//   - a *fence.LeaseLostError (errors.Is fence.ErrLeaseLost): the lease was
//     lost; its reason is the session's (a renewal refused, a re-read
//     showing the key taken, or the local safety deadline passing while
//     the store could not be reached, a *fence.DeadlineError);
//   - ErrResigned: Resign was called;
//   - the cause of the campaign's context, when it ended;
//   - fence.ErrReleased: the session was closed (Campaign then returns an
//     error matching fence.ErrSessionClosed).
//
// The candidate counts itself a follower (IsLeader false, Observer.Demoted
// called) as soon as that context is cancelled, before the function
// returns. The lease is released when the function returns.
package election
