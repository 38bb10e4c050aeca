// Package fence makes distributed locks safe by pairing lockers that issue
// fencing tokens with resources that reject stale ones.
//
// # Efficiency versus correctness
//
// A distributed lock is used for one of two reasons. For efficiency, it
// keeps two workers from doing the same job most of the time; an occasional
// duplicate costs a little. For correctness, it must keep two workers from
// ever writing the same data at once. A lease alone cannot give the second:
// a holder can stop (a garbage-collection pause, a VM migration, a network
// partition) after it last checked its lease, stay stopped past the expiry
// while another worker takes the key, then wake and write. No amount of
// renewing, clock care or checking "am I still the holder?" closes that
// window, because the pause can fall between the check and the write.
//
// # The token is the guarantee
//
// Every Locker issues, with each lease, a Token that is strictly greater than
// every token issued for that key before. The resource being protected keeps
// the highest token it has seen and applies a write only if the write's
// token is not lower, in the same atomic step (one conditional write, or one
// transaction). A stale holder's write carries an old token and is refused
// with ErrStaleToken, however late it arrives. Holding a Lease is therefore
// not a safety guarantee; only the token, checked by the resource, is.
//
// # One Locker, one Resource, every backend
//
// Every locker backend returns the one concrete *Locker, and every
// resource backend the one *Resource:
//
//	locker, err := postgres.New(pool, nil)                        // a *fence.Locker
//	locker, err := fence.OpenLocker(ctx, os.Getenv("STORE"), nil) // the same, from a URL
//
// Under each is a small driver (package driver, for backend authors) that
// does the store's atomic operations; the Locker does the lease policy of
// the contract once for every backend (validation, owner ids, context
// checks, ValidUntil from the send time on the local clock, the book of
// each lease's latest renewal and the refusal of a lease that ran out
// locally, errors in one style, OpError). What is particular to a backend
// is a function of its package, or its SDK client through As. Backends
// register URL openers when imported, so OpenLocker and OpenResource open
// any of them from a URL; package backends imports them all. An Observer
// set on a Locker or Resource sees every store call and session event
// (package fenceotel makes one for OpenTelemetry).
//
// # Handles and sessions
//
// Most programs take locks through a Session rather than a Locker:
//
//	sess, err := fence.NewSession(locker, &fence.SessionOptions{TTL: 30 * time.Second})
//	...
//	h, err := sess.Lock(ctx, "nightly-report", &fence.LockOptions{Wait: time.Minute}) // nil: try once
//	if err != nil {
//		return err
//	}
//	defer h.Release(ctx)
//	ctx, cancel := h.Context(ctx) // cancelled with ErrLeaseLost if the lease is lost
//	defer cancel()
//	return reports.Put(ctx, "daily.csv", h.Token(), data) // the resource checks the token
//
// A session owns one keepalive for every lease it holds: one goroutine,
// running only while it holds something, renews the leases together, in
// one call where the store allows it (PostgreSQL renews them all in one
// statement), and updates each Handle in place, so that no copy of a
// lease goes stale. A handle's Done channel closes when its lease is lost
// or released, and Err says which. A blocked Lock wakes when the key is
// released by a handle of this process, when the store notifies a release
// or a break (PostgreSQL's LISTEN/NOTIFY), or when the holder's lease ends
// where the store says when; it polls at a bounded interval only for what
// nothing else tells it (a crashed holder on a clock-free store). Callers
// of Lock in one process queue in arrival order.
//
// The session is the centre: everything that holds a lease takes the one
// the application made, as etcd's concurrency package builds its Mutex and
// Election on one Session. Session.Lock takes a lock; guard.Run runs a
// function under one; election and schedule elect a leader and run a job
// per window through it; Bind ties a Resource to a handle, so that writes
// carry its token under its key (or a name under it); resources/sql's
// Fences.Run runs a fenced transaction under a handle. Each waits for a
// busy key as LockOptions says: not at all by default, up to Wait, or
// until ctx ends (WaitForever).
//
// # What fence deliberately does not offer
//
//   - Reentrant locks. A second Lock of a key by the same session, or
//     even the same goroutine, is refused with ErrHeld: each lease has its
//     own owner id and its own token. A reentrant lock would hand one
//     token to two pieces of work that the caller believes separate, and
//     the resource could not tell their writes apart. Pass the Handle down
//     instead of locking again.
//   - Read-write locks. A fencing token orders one holder after another; with
//     several holders of one key at once, a resource cannot decide which of two
//     concurrent tokens is stale, so the guarantee fence exists for would not
//     hold. Protect readers with the resource's own consistency instead.
//
// # Several keys, semaphores, public values
//
// Session.LockAll takes a set of keys all or nothing, with one handle (and
// one token) per key: in one atomic operation where the store has one, else
// one key at a time in sorted order, so that two callers never deadlock.
// Session.LockSemaphore takes one of N permits, each a key of its own
// (SlotKey) with its own tokens, so a resource fenced per slot refuses a
// stale permit holder. Handle.Publish keeps a small public value with a
// lease (an election leader's address), which anyone reads with
// Locker.Inspect (LockInfo.Value) without learning the owner id.
//
// # Packages
//
//   - guard runs a function under a handle of a Session: acquire, keep
//     alive, cancel the function's context when the lease is lost,
//     release; election and schedule build on the Session too.
//   - lockers/... are the lock backends; lockers/lockertest is the
//     conformance suite each passes.
//   - resources/... store the highest token seen and reject stale writes;
//     resources/resourcetest is their conformance suite.
//   - driver is what a backend implements; backends registers every
//     backend's URL schemes.
//   - clocktest is a fake Clock for tests.
package fence
