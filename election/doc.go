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
// # Followers
//
// A leader can tell the others where to find it. Options.Value (an
// address, say; at most fence.MaxValueLen bytes, never a secret) is
// published with each term (fence.Handle.Publish) before the leader's
// function runs and before Observer.Elected; Candidate.Proclaim changes it
// during the term. If that first publish finds the lease already gone,
// the term is over before it started: no Elected, no function.
//
// Anyone who can read the store follows the leader without campaigning:
// CurrentLeader reads it once, Observe keeps reading it and reports each
// change (a term started, a term ended, the value changed) on a channel.
// A follower sees a Leader: the term's token, the value and when the
// lease runs out where the store says; never the owner id, the secret
// that would let it release or renew the leader's lease.
//
//	f, err := election.Observe(ctx, locker, "scheduler-leader", nil)
//	...
//	for c := range f.Changes() {
//		route(c.Leader.Value) // "" while nobody leads
//	}
//
// A follower is woken by the store, not by a timer, where the store can
// push: it subscribes to the key's notifications (release, break and
// publish; driver.ReleaseNotifier), and, where the store says when the
// lease it last read runs out (LockInfo.ValidUntil), reads the key again
// then, so a leader that crashed is seen gone at its expiry. It also
// reads the key at least every ObserveOptions.PollInterval (1 s by
// default), which bounds how late it learns what the store does not
// push, and all it learns while subscribing fails. A follower thus costs
// one read (Locker.Inspect) per notification, about one per TTL while a
// leader renews, and one per PollInterval. Only the latest state counts:
// a follower that reads its changes late gets one Change from what it
// took last to now, and the watch never waits for it.
//
// How a term ended is what a reader of the key can tell: Released (the
// key free before the lease's expiry: resigned, stopped or broken by an
// operator, which look alike), Expired (seen over only after its expiry:
// the leader crashed or was cut off), Superseded (a later term seen
// without the key seen free), and, on a store that does not say when its
// leases run out (ZooKeeper), Vacated.
//
// A follower may see a term start a moment before its value: the lease is
// taken, then the value published, and a read can fall between the two;
// the value then comes as a value change. Every store of this module
// keeps values (driver.Publisher). On a store whose driver keeps none,
// candidates elect as before, Proclaim returns an error matching
// errors.ErrUnsupported, and followers see every term with an empty value;
// they learn of a new term from a poll, as no publish wakes them.
//
// A follower's view is a report, like IsLeader, not a safety guarantee:
// the leader it names may have lost its lease since the last read, and
// a request sent to it may reach a deposed leader. That is harmless when
// the leader's writes carry its term's token (see below). A follower that
// must never go back to an older leader compares Term with the highest
// it saw.
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
