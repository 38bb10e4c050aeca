// Package kubernetes keeps the leases of a *fence.Locker in Kubernetes
// Lease objects (coordination.k8s.io/v1), the objects client-go's leader
// election (k8s.io/client-go/tools/leaderelection, LeaseLock) uses, so
// that a fence elector and a client-go elector on one Lease never lead
// at once. New returns the Locker over a clientset; fence.OpenLocker
// opens one from a URL (below).
//
// Holding a lease is not a safety guarantee, only its token is: pass
// Lease.Token to a fenced resource (see package fence). client-go's own
// documentation says as much of its elector: it "does not guarantee that
// only one client is acting as a leader (a.k.a. fencing)".
//
// # The Lease
//
// Each key is one Lease in the Locker's namespace. The Locker writes
// the fields client-go writes, with their meaning:
//
//   - spec.holderIdentity: the owner id of the lease; "" when free.
//   - spec.leaseDurationSeconds: the TTL in whole seconds, rounded up
//     (a 2.5 s TTL is stored as 3 s: the holder counts its own 2.5 s,
//     contenders wait 3 s, which is safe).
//   - spec.acquireTime and spec.renewTime: the writer's wall clock, as
//     client-go writes them; no Locker reads them.
//   - spec.leaseTransitions: one more on every acquisition.
//
// and these annotations:
//
//   - fence.fencekit.dev/token and fence.fencekit.dev/owner: the token
//     and owner id of the last lease a Locker gave out on the Lease,
//     written by the acquiring update. The Lease is held by that lease
//     while spec.holderIdentity is the same owner id; any other holder
//     is a holder that is no Locker (a client-go elector, which keeps
//     annotations as they are).
//   - fence.fencekit.dev/value and fence.fencekit.dev/value-token: the
//     value published with a lease (base64 of its bytes) and its token
//     (see "Public values").
//   - fence.fencekit.dev/key: the key, on a Lease whose name is a hash of
//     it (see "Keys and Lease names").
//
// Every change is an update carrying the resourceVersion the Locker read
// (compare-and-swap): the API server refuses it with 409 Conflict when
// anyone wrote the Lease in between. Acquire reads the Lease and, if it
// is free or has run out (see "Expiry"), writes the new lease in one such
// update; a Lease that does not exist is first created free. Renew,
// Release and Publish read the Lease, check that it still holds the
// lease's owner id and token, and update it; a conflict there (someone
// edited a label, say) makes them read again, up to five times. Release
// and Break free the Lease as client-go's ReleaseOnCancel does
// (holderIdentity "", leaseDurationSeconds 1), so a client-go elector
// takes it at once. Each method is two requests (a read and an update);
// an Acquire of a new key three. Lease objects are never deleted by the
// Locker.
//
// A Lease whose annotations break these rules (a token that is no whole
// number from 1 to 2^64-1, an owner without a token, a hashed name
// without its key), a holder without leaseDurationSeconds, or a
// resourceVersion that is no integer, gets an error matching
// fence.ErrCorrupt; nothing is written over it.
//
// # Tokens
//
// A lease's token is the resourceVersion its acquiring update replaced,
// kept in the token annotation written by that same update. It is
// unique, because only one update can replace a given resourceVersion
// (the others get 409 Conflict); and it increases, because the next
// acquisition replaces a resourceVersion that the previous acquisition's
// update, or a later write, made. resourceVersions come from the
// cluster's etcd revision, which only grows across the whole cluster, and
// since Kubernetes 1.35 (KEP-5504) they are decimal integers that may be
// compared: a Lease deleted and created again gets resourceVersions
// higher than every one before it, so its tokens go on increasing
// (TestTokensSurviveDeletion). spec.leaseTransitions is no token: it is
// an int32 that client-go also writes, and it restarts at 0 when the
// Lease is deleted. A Lease created free and acquired at once gets the
// create's resourceVersion as its first token. Tokens are not
// consecutive.
//
// The token is unusable on an API server that restores etcd from an
// older backup (every resourceVersion after the backup is issued
// again), and on a server whose resourceVersions are not integers
// (before Kubernetes 1.35 they were opaque strings): such a Lease gets
// an error matching fence.ErrCorrupt.
//
// # Expiry
//
// No Locker compares its clock with another machine's: renewTime is
// never read. A Locker takes over a held Lease only once it has seen
// the same resourceVersion, unchanged, for leaseDurationSeconds measured
// on its own monotonic clock, as client-go's elector does (it times the
// record, not renewTime). Clock skew between machines does not matter,
// only clock rates do. A holder renews by writing renewTime, which makes
// a new resourceVersion and restarts every observer's wait. A Lease held
// by a client-go elector is judged the same way. The Locker remembers
// what it saw, so an Acquire (or Inspect) starts the wait and a later
// Acquire takes the key over; a process that starts afresh waits a full
// lease from its first look, even if the holder died long ago, and a
// contender that tries once and exits never takes a held key over (the
// Locker's driver.Info says ClockFree). TestForeignHolder shows a Lease
// whose renewTime is an hour old taken over only after a full lease of
// watching, and the wait restarted by a renewal.
//
// A holder counts its lease from the time it sent the request, on its
// own clock (Lease.ValidUntil), and stops at that time; a contender
// counts from when it saw the write, later. A client-go elector
// stops leading once its renewals have failed for its RenewDeadline, a
// RetryPeriod after its last successful renewal; keep RetryPeriod plus
// RenewDeadline below LeaseDuration, as client-go requires, and a
// Locker's contender does not take a Lease it still leads.
// TestInteropWithClientGo runs three electors of each kind on one Lease
// for 30 s (client-go: LeaseDuration 3 s, RenewDeadline 2 s, RetryPeriod
// 0.5 s, ReleaseOnCancel; fence: TTL 2.5 s), leaders resigning, crashing
// and cut off from the server, and finds no two leading intervals
// overlapping and leadership moving both ways. Two client-go properties
// remain the user's: with ReleaseOnCancel, client-go releases the Lease
// before it cancels its leader's context, so stop the leader's work
// before cancelling Run (as client-go's documentation asks); and its
// release on cancel is bounded by RenewDeadline, so against a server
// that hangs rather than refuses, its leader's context may end later
// than LeaseDuration after the last renewal (read from client-go's code,
// untested here).
//
// # Keys and Lease names
//
// A key that is a Lease name (a DNS subdomain: at most 253 of lower-case
// letters, digits, '-' and '.', starting and ending with a letter or
// digit) names its Lease itself, so a Locker and a client-go elector
// share the Lease of a key such as "my-controller". Any other key (upper
// case, '_', '/', longer, other letters) is kept in a Lease named
// "fence-sha256-" and 52 letters and digits of the key's SHA-256, with
// the key in an annotation; a key that starts with "fence-sha256-" is
// hashed too, so no two keys share a Lease (TestSimilarKeysNeverShare).
// Keys are up to MaxKeyLen bytes.
//
// # Waiting
//
// A Session.Lock that waits for a key watches the key's Lease (a list
// and a watch with the field selector metadata.name), and wakes when the
// Lease is released, broken, deleted, taken by another holder or given a
// new public value, and when its lease runs out for this Locker. A
// renewal wakes nobody.
//
// # Public values
//
// Locker.Publish (Handle.Publish) keeps a value of up to
// fence.MaxValueLen bytes with a lease in the value annotations, with an
// update conditional on the resourceVersion read; Inspect reports it
// while the lease is held. A Publish leaves the spec alone, so a
// client-go elector does not count it as a renewal; a Locker, which
// times the resourceVersion, counts it as one: its contenders wait a
// full lease from the Publish, later than needed, never earlier.
//
// # Inspect
//
// Inspect reads the Lease once. A Lease held by a Locker's lease shows
// its owner, token and value; Held turns false once this Locker has seen
// the Lease unchanged for its duration, and ValidUntil is when that will
// be (not when the holder's lease ends, which only the holder knows). A
// Lease held by a holder that is no Locker shows that holder's identity
// as Owner with the token of the last lease a Locker gave out, or no
// owner and no token when no Locker ever held it: its term has no token
// a fenced resource could check.
//
// # Permissions
//
// The Locker needs, in its namespace, these verbs on resource leases in
// API group coordination.k8s.io, and nothing more (Verbs): get, create
// and update (Acquire, Renew, Release, Break, Publish, Inspect), list and
// watch (waiting). As a Role:
//
//	apiVersion: rbac.authorization.k8s.io/v1
//	kind: Role
//	metadata: {name: fence-locker, namespace: NAMESPACE}
//	rules:
//	- apiGroups: ["coordination.k8s.io"]
//	  resources: ["leases"]
//	  verbs: ["get", "list", "watch", "create", "update"]
//
// bound to the program's service account with a RoleBinding. A request
// the server refuses for want of one gets an error that names the verb
// and these rules (TestPermissions). A namespace that does not exist
// gets an error matching fence.ErrStoreMissing from Acquire (Inspect
// then shows the key free); the Locker does not create namespaces.
//
// # Opening from a URL
//
// Importing this package registers the URL scheme kubernetes with
// fence.OpenLocker:
//
//	kubernetes://NAMESPACE[?kubeconfig=PATH&context=NAME&server=URL]
//
// Without kubeconfig= and context=, the Locker uses the in-cluster
// configuration (the pod's service account) when it runs in a pod, and
// otherwise the kubeconfig files of KUBECONFIG, or ~/.kube/config, as
// kubectl does; kubeconfig= names a file, and context= a context in it
// instead of its current one. server= replaces the configuration's API
// server address (an https:// or http:// URL, as kubectl's --server),
// keeping its credentials and TLS settings; with no kubeconfig to be
// found, it names an API server to reach without credentials. fence.OpenOptions' Clock is Options.Clock;
// its HTTPClient is not used (the configuration's TLS settings and
// credentials make the transport). Where the configuration sets no
// client-side rate limit, the opener allows 50 requests a second in
// bursts of 100.
//
// # Rate limits
//
// A clientset made by kubernetes.NewForConfig with a rest.Config whose
// QPS is zero allows client-go's default of 5 requests a second, in
// bursts of 10, shared by everything that uses it: two calls of a Locker
// a second, roughly. Give the Locker a clientset with a higher QPS and
// Burst (or a QPS below zero, for none), and let the API server's
// priority and fairness limit it.
package kubernetes
