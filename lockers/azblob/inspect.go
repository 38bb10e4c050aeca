package azblob

import (
	"context"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/backoff"
)

// Inspect implements driver.Locker. It reads the blob's properties;
// while a lease is active it reads them again conditioned on the lease
// id of the recorded owner and token, which tells whether that lease is
// the active one. Held is true while a lease is active, and Value is
// then the value published with it. Azure does not say when a lease
// ends, so ValidUntil is zero.
//
// An active lease that is not the recorded one belongs to an acquirer
// between its lease and its token write (one round trip): Inspect reads
// again, at most four times in all, tens of milliseconds apart, so that it
// shows the new owner and token rather than the previous ones. Should the
// acquirer stall past that, Inspect shows the previous owner and token as
// held (or the key as never acquired, on its first acquisition).
func (d *store) Inspect(ctx context.Context, key string) (fence.LockInfo, error) {
	if err := blobName(key); err != nil {
		return fence.LockInfo{}, err
	}
	for attempt := 1; ; attempt++ {
		r, err := d.read(ctx, key, "")
		switch {
		case bloberror.HasCode(err, bloberror.BlobNotFound):
			return fence.LockInfo{Key: key}, nil
		case err != nil:
			return fence.LockInfo{}, wrap("read", err)
		}
		info := r.info(key)
		if !info.Held {
			return info, nil
		}
		if attempt < inspectReads {
			he, err := d.held(ctx, key, r)
			if err != nil {
				return fence.LockInfo{}, err
			}
			if he.Owner == "" {
				if err := backoff.Sleep(ctx, time.Duration(attempt)*inspectPause); err != nil {
					return fence.LockInfo{}, wrap("read", err)
				}
				continue
			}
		}
		if info.Value, err = r.published(key); err != nil {
			return fence.LockInfo{}, err
		}
		return info, nil
	}
}

// inspectReads bounds Inspect's reads of a blob whose active lease is
// not the recorded one; inspectPause is how long it first waits for that
// lease's acquirer to write its token (then twice, three times that).
const (
	inspectReads = 4
	inspectPause = 10 * time.Millisecond
)
