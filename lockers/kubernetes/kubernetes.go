package kubernetes

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
)

// Limits of the Kubernetes locker.
const (
	// MaxKeyLen is the longest key accepted, in bytes of UTF-8. A key
	// that is no Lease name is kept in an annotation (see the package
	// doc, "Keys and Lease names").
	MaxKeyLen = 1024
	// MaxOwnerLen is the longest owner id accepted, in bytes: the owner
	// id is written to spec.holderIdentity.
	MaxOwnerLen = 1024
	// MinTTL and MaxTTL bound the lease duration. A Lease keeps it in
	// whole seconds (spec.leaseDurationSeconds); a TTL that is no whole
	// number of seconds is stored rounded up (see the package doc).
	MinTTL = time.Second
	MaxTTL = 24 * time.Hour
)

// Client is the part of a Kubernetes clientset the Locker calls: a
// *kubernetes.Clientset of k8s.io/client-go (kubernetes.Interface) is one.
type Client interface {
	CoordinationV1() coordinationv1.CoordinationV1Interface
}

// Options configure the Locker of New. A nil *Options means all defaults.
type Options struct {
	// Clock times leases and how long a Lease's resourceVersion has
	// been seen unchanged (see the package doc, "Expiry"); its wall
	// reading is written to acquireTime and renewTime, which no
	// Locker reads. Default: fence.SystemClock.
	Clock fence.Clock
}

// store is the driver.Locker on the Leases of one namespace.
type store struct {
	client    Client
	namespace string
	clock     fence.Clock
	obs       *clockfree.Observations
	// ignoreForeign makes the store take Leases held by a holder that is
	// no Locker (a client-go elector) as if they were free: only the
	// tests set it, to show that the interoperability test catches it.
	ignoreForeign bool
}

var (
	_ driver.Locker          = (*store)(nil)
	_ driver.ReleaseNotifier = (*store)(nil)
	_ driver.Publisher       = (*store)(nil)
	_ driver.Aser            = (*store)(nil)
)

// New returns a *fence.Locker that keeps its leases in Lease objects of
// namespace (coordination.k8s.io/v1) through client, a clientset such as
// the one kubernetes.NewForConfig of k8s.io/client-go returns. It checks
// its arguments but does not contact the API server. The Locker's As
// gives client to a *Client.
func New(client Client, namespace string, opts *Options) (*fence.Locker, error) {
	d, err := newStore(client, namespace, opts, nil)
	if err != nil {
		return nil, err
	}
	return driver.NewLocker(d, &driver.LockerOptions{Clock: d.clock})
}

// newStore checks the arguments of New and returns the store they make,
// remembering what it sees in obs (nil: observations of its own). The
// tests share one obs between the lockers of one process.
func newStore(client Client, namespace string, opts *Options, obs *clockfree.Observations) (*store, error) {
	if client == nil {
		return nil, &fence.InvalidError{Field: "client", Reason: "nil"}
	}
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if obs == nil {
		obs = clockfree.NewObservations()
	}
	return &store{client: client, namespace: namespace, clock: driver.ClockOrSystem(o.Clock), obs: obs}, nil
}

// checkNamespace refuses a name that is no Kubernetes namespace name (a
// DNS label) with a *fence.InvalidError.
func checkNamespace(namespace string) error {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return &fence.InvalidError{Field: "namespace", Reason: fmt.Sprintf("%q is no namespace name: %s", namespace, errs[0])}
	}
	return nil
}

// Info implements driver.Locker.
func (d *store) Info() driver.Info {
	return driver.Info{Name: "kubernetes", MaxKeyLen: MaxKeyLen, MaxOwnerLen: MaxOwnerLen, MinTTL: MinTTL, MaxTTL: MaxTTL, ClockFree: true}
}

// As implements driver.Aser: it gives the client given to New (or made
// by the URL opener) to a *Client.
func (d *store) As(target any) bool {
	if p, ok := target.(*Client); ok {
		*p = d.client
		return true
	}
	return false
}

// seconds returns ttl in whole seconds, rounded up: a Lease's duration.
func seconds(ttl time.Duration) int32 {
	return int32((ttl + time.Second - 1) / time.Second)
}
