package azblob

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence"
)

// Break implements driver.Locker. It breaks the blob's lease with a
// break period of 0, then takes and releases the blob under a fresh random
// lease id, so that the broken lease's id is no longer the blob's last
// one: Azure would otherwise let the broken holder release the broken
// lease. When another acquirer takes the blob between the two steps, that
// is enough too. A missing blob or a blob without a lease is not an error.
// The token counter is not touched: the next Acquire increments it past
// the broken holder's token.
func (d *store) Break(ctx context.Context, key string) error {
	if err := blobName(key); err != nil {
		return err
	}
	err := d.breakLease(ctx, key)
	switch {
	case err == nil, bloberror.HasCode(err, bloberror.LeaseAlreadyBroken):
	case bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.LeaseNotPresentWithLeaseOperation):
		return nil
	default:
		return wrap("break the lease", err)
	}
	id := fence.NewOwnerID()
	if _, err := d.acquireLease(ctx, key, id, MinTTL, ""); err != nil {
		if bloberror.HasCode(err, bloberror.LeaseAlreadyPresent) {
			return nil
		}
		return wrap("retire the broken lease", err)
	}
	if err := d.releaseLease(ctx, key, id); err != nil {
		return wrap("retire the broken lease", err)
	}
	return nil
}
