package azblob

import (
	"context"
	"errors"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/probe"
)

var _ driver.ReleaseNotifier = (*store)(nil)

// NotifyRelease implements driver.ReleaseNotifier by probing (see the
// package doc, "Waiting"): while a Session.Lock of this Locker waits for
// key, its blob's properties are read every Options.ProbeInterval, and
// the waiter is woken when they show the lease released, broken, expired
// or taken by another owner. With probes off it returns an error matching
// errors.ErrUnsupported, and waiters poll.
func (d *store) NotifyRelease(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if d.probe == nil {
		return nil, nil, errors.ErrUnsupported
	}
	return d.probe.Notify(ctx, key)
}

// probeRead is the probe of key: one Get Blob Properties (a HEAD
// request). It is not conditioned on the ETag: lease operations do not
// change the ETag, only the lease state that the answer's headers carry,
// so the reading's Version is the ETag and the lease state. A Break goes
// through three states (broken, leased under a fresh id, available): the
// last one must read as a change from the first, or a waiter that tried
// the key while the fresh id held it would not be woken again. A Publish
// changes the metadata, which the reading's Value shows.
func (d *store) probeRead(ctx context.Context, key string, _ probe.Reading) (probe.Reading, error) {
	r, err := d.read(ctx, key, "")
	switch {
	case bloberror.HasCode(err, bloberror.BlobNotFound):
		return probe.Reading{}, nil
	case err != nil:
		return probe.Reading{}, err
	}
	reading := probe.Reading{Version: string(r.etag) + " " + r.state}
	if r.leased {
		reading.Holder = r.owner + " " + r.token.String()
		if reading.Value, err = r.published(key); err != nil {
			return probe.Reading{}, err
		}
	}
	return reading, nil
}
