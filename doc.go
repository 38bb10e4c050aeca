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
// # One lease core over drivers
//
// Every locker is a PortableLocker over a LockerDriver: the driver does the
// store's atomic operations, the PortableLocker the lease policy of the
// contract, once for every backend (validation, owner ids, context checks,
// ValidUntil from the send time on the local clock, the book of each
// lease's latest renewal and the refusal of a lease that ran out locally,
// errors in one style, OpError). Resources are PortableResources over
// ResourceDrivers in the same way. Backends register URL openers when
// imported, so OpenLocker and OpenResource open any of them from a URL;
// package backends imports them all. See LockerDriver for what a new
// backend implements, and lockers/lockertest and resources/resourcetest for
// the suites that certify it.
//
// # Packages
//
//   - guard runs a function under a lease: acquire, renew in the background,
//     cancel the function's context when the lease is lost, release.
//   - lockers/... are the lock backends; lockers/lockertest is the
//     conformance suite each passes.
//   - resources/... store the highest token seen and reject stale writes;
//     resources/resourcetest is their conformance suite.
//   - clockfree decides expiry on stores without a server clock; backends
//     registers every backend's URL schemes.
//   - clocktest is a fake Clock for tests.
package fence
