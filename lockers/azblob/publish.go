package azblob

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

var _ driver.Publisher = (*store)(nil)

// Publish implements driver.Publisher in two requests: Get Blob
// Properties under the lease's id, which the service refuses unless that
// very lease is the blob's, then Set Blob Metadata under the same lease
// id with If-Match on the ETag read, which keeps every other entry and
// sets the value (base64) and the lease's token beside it; "" removes
// them. The lease and its expiry are the service's and do not change.
// When the ETag changed in between (a concurrent Publish of the same
// lease, or the SDK repeating this one), it reads and writes again, at
// most three times.
func (d *store) Publish(ctx context.Context, lease fence.Lease, value string) error {
	if err := driver.ValidateTTL(lease.TTL, MinTTL, MaxTTL); err != nil {
		return err
	}
	if err := checkInput(lease.Key, lease.Owner, lease.TTL); err != nil {
		return err
	}
	id := LeaseID(lease.Key, lease.Owner, lease.Token, lease.TTL)
	lost := func(err error) error {
		return fmt.Errorf("%w: %w", &fence.NotHeldError{Key: lease.Key, Reason: "released, broken, expired or taken over"}, err)
	}
	for attempt := 1; ; attempt++ {
		r, err := d.read(ctx, lease.Key, id)
		switch {
		case err != nil && (isNotHeld(err) || bloberror.HasCode(err, bloberror.BlobNotFound)):
			return lost(err)
		case err != nil:
			return wrap("read", err)
		case !r.leased || r.token != lease.Token || r.owner != lease.Owner:
			return &fence.NotHeldError{Key: lease.Key, Reason: fmt.Sprintf("the blob holds token %d, not %d of this owner", r.token, lease.Token)}
		}
		err = d.setMeta(ctx, lease.Key, id, r.etag, r.withValue(lease.Token, value))
		switch {
		case err == nil:
			return nil
		case isNotHeld(err):
			return lost(err)
		case !bloberror.HasCode(err, bloberror.ConditionNotMet) || attempt == maxAttempts || ctx.Err() != nil:
			return wrap("set metadata", err)
		}
	}
}
