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
// # Packages
//
//   - guard runs a function under a lease: acquire, renew in the background,
//     cancel the function's context when the lease is lost, release.
//   - lockers/... are the lock backends; lockers/lockertest is the
//     conformance suite each passes.
//   - resources/... store the highest token seen and reject stale writes;
//     resources/resourcetest is their conformance suite.
//   - clocktest is a fake Clock for tests.
package fence
