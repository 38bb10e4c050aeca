package azblob

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence"
)

// Inspect implements driver.Locker with one read of the blob's
// properties. Held is true while a lease is active, and Value is then
// the value published with it. Azure does not say
// when a lease ends, so ValidUntil is zero. While an acquirer is between
// its lease and its token write (one round trip), Inspect shows the key
// held by the previous owner and token, or as never acquired on a key's
// first acquisition.
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	if err := blobName(key); err != nil {
		return fence.LockInfo{}, err
	}
	r, err := d.read(ctx, key, "")
	switch {
	case bloberror.HasCode(err, bloberror.BlobNotFound):
		return fence.LockInfo{Key: key}, nil
	case err != nil:
		return fence.LockInfo{}, wrap("read", err)
	}
	info := r.info(key)
	if info.Held {
		if info.Value, err = r.published(key); err != nil {
			return fence.LockInfo{}, err
		}
	}
	return info, nil
}
