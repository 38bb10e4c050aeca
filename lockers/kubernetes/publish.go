package kubernetes

import (
	"context"
	"encoding/base64"

	coordv1 "k8s.io/api/coordination/v1"

	"github.com/fencekit/fence"
)

// Publish implements driver.Publisher: one update, conditional on the
// resourceVersion read, that sets the annotations of the value (base64
// of its bytes) and of the lease's token if the Lease still holds the
// lease's owner and token; a Publish of "" removes both. It leaves the
// spec alone, so a client-go elector does not take it for a renewal; a
// Locker, which times the resourceVersion, waits a full lease from it
// (see the package doc, "Public values"). The watches of NotifyRelease
// see the change.
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	return d.change(ctx, "publish", lease, func(l *coordv1.Lease) {
		if value == "" {
			delete(l.Annotations, annValue)
			delete(l.Annotations, annValueToken)
			return
		}
		setAnnotation(l, annValue, base64.StdEncoding.EncodeToString([]byte(value)))
		setAnnotation(l, annValueToken, lease.Token.String())
	})
}
