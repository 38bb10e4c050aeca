package kubernetes

import (
	"context"
	"errors"
	"fmt"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fencekit/fence/driver"
)

// Verbs lists the RBAC verbs a Locker needs on leases in the
// coordination.k8s.io API group of its namespace, and nothing more (see
// the package doc, "Permissions").
var Verbs = []string{"get", "list", "watch", "create", "update"}

// apiError names the request that failed with err, a verb on the Lease
// name: a refusal for want of a permission names the rule it needs, a
// namespace that does not exist also matches fence.ErrStoreMissing.
func (d *store) apiError(verb, name string, err error) error {
	err = fmt.Errorf("%s Lease %s/%s: %w", verb, d.namespace, name, err)
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("%w (the locker needs RBAC permission to %s leases in API group coordination.k8s.io in namespace %s; it uses verbs %v)", err, verb, d.namespace, Verbs)
	}
	if namespaceMissing(err) {
		return driver.StoreMissing(err)
	}
	return err
}

// namespaceMissing reports whether err is the API server's answer that
// the namespace does not exist.
func namespaceMissing(err error) bool {
	var s apierrors.APIStatus
	if !errors.As(err, &s) || !apierrors.IsNotFound(err) {
		return false
	}
	details := s.Status().Details
	return details != nil && details.Kind == "namespaces"
}

// answered reports whether err is an answer of the API server that
// refused the request, rather than a lost answer after which the request
// may or may not have been applied.
func answered(err error) bool {
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		return false
	}
	code := s.Status().Code
	return code >= 400 && code < 500 && code != 408 && code != 429
}

// get reads the Lease name; nil when there is none.
func (d *store) get(ctx context.Context, name string) (*coordv1.Lease, error) {
	l, err := d.leases().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, d.apiError("get", name, err)
	}
	return l, nil
}
