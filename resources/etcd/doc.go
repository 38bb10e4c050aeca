// Package etcd is a fenced store of values in an etcd cluster, behind
// *fence.Resource: each write carries a fencing token and is applied only
// if the token is at least the highest the name has seen, in one etcd
// transaction that also raises that high-water mark.
//
// Its name clashes with lockers/etcd; alias one on import, for example
// etcdres "github.com/fencekit/fence/resources/etcd". The resource's As
// gives the *clientv3.Client it was made with, to a **clientv3.Client
// target.
//
// # Records
//
// Name N is one etcd key, Options.Prefix + N (default DefaultPrefix,
// "fence/values/"), whose value is a record:
//
//	fence1 TTTTTTTTTTTTTTTTTTTT vVALUE    a value written with token T
//	fence1 TTTTTTTTTTTTTTTTTTTT t         a tombstone left by Delete with token T
//
// T is the token of the write that stored the record, in 20 decimal
// digits with leading zeros. Every accepted write raises the high-water
// mark to its own token, so T is the mark: Highest returns it, and Get
// returns the value with it. A tombstone keeps the mark after Delete, so a
// stale writer cannot create the name again; the key is never deleted.
//
// # One transaction per write
//
// The zero-padded token makes records compare bytewise as their tokens
// do, which etcd's Compare on a value can test. A write with token t is
// one transaction:
//
//	if value(K) > "fence1 00000000000000000000 ~" and value(K) < "fence1 " + t(20 digits) + "!"
//	then put(K, new record)
//	else txn(if create_revision(K) = 0 then put(K, new record) else get(K))
//
// The first test admits exactly the records of a token at most t (the
// byte after a record's digits is a space, which sorts before '!'), so
// equal tokens pass; the nested transaction creates a name never written
// (a compare on the value of a missing key fails in etcd); the read tells
// why a write was refused: a higher token (a fence.StaleTokenError with
// both tokens) or a value of another form (fence.ErrCorrupt, and it is
// not written over). One round trip and one raft commit per write,
// contended or not; etcd serializes the transactions of a key.
//
// Get and Highest report every value that is not a record with
// fence.ErrCorrupt. The compare cannot tell all of them from records: a
// value that starts with "fence1 " and sorts like a record of a token up
// to t (such as "fence1 00000000000000000005 x") is written over by a
// write of token t; any other value is never written over.
//
// # Claims
//
// Claim (fence.Resource.Claim) reads the record and puts it again with the
// claimed token, value and kind unchanged, in a transaction comparing the
// key's mod revision with the one read (create revision 0 for a key that
// does not exist, which gets a tombstone of the token).
//
// # Lost answers
//
// A write whose answer is lost (a timeout, a lost connection, a leader
// change) may have been committed. The write is then settled by reading
// the record back: if it is the one written (same token, same value or
// tombstone), the write succeeded; otherwise the error matches
// fence.ErrUnknownOutcome (a *fence.UnknownOutcomeError carrying the
// higher token that replaced it, if any), never fence.ErrStaleToken.
// Retrying with the same token and value is harmless.
//
// # Limits and what breaks the guarantees
//
// Names are at most MaxKeyLen bytes; a value, with its record, must fit
// in one etcd request (--max-request-bytes, 1.5 MiB by default; a larger
// one is refused by the server and changes nothing). Committed writes
// survive a leader failover while a majority of the members keep their
// data. Restoring a snapshot rewinds the marks to the snapshot's: a stale
// writer whose token lies between a name's mark in the snapshot and the
// mark lost with the restore is then no longer refused. Writing keys
// under the prefix by hand breaks the fence.
//
// # Opening from a URL
//
// Importing the package registers the URL schemes "etcd" and "etcds"
// (TLS) with fence.OpenResource, in the form of the etcd locker's URLs
// (see lockers/etcd) without min-ttl:
//
//	etcd://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...][/PREFIX/][?dial-timeout=5s]
//	etcds://HOST[:PORT],...[/PREFIX/][?ca=FILE&cert=FILE&key=FILE&dial-timeout=5s]
//
// The opened resource's Close closes the client it made.
package etcd
