package azblob

import (
	"bytes"
	"context"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/azblobconn"
)

// The calls below are the whole use this package makes of the SDK, one
// request each (plus the SDK's own retries). Each returns the service's
// refusals told in one line (see azblobconn.OneLine).

// read returns the record of key's blob. With a non-empty leaseID the
// read succeeds only while that lease is active on the blob. A missing
// blob is an error with code BlobNotFound.
func (d *store) read(ctx context.Context, key, leaseID string) (record, error) {
	var opts *blob.GetPropertiesOptions
	if leaseID != "" {
		opts = &blob.GetPropertiesOptions{AccessConditions: &blob.AccessConditions{
			LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: &leaseID},
		}}
	}
	resp, err := d.c.NewBlobClient(key).GetProperties(ctx, opts)
	if err != nil {
		return record{}, azblobconn.OneLine(err)
	}
	r, err := parseRecord(key, resp.Metadata)
	if err != nil {
		return record{}, err
	}
	if resp.ETag != nil {
		r.etag = *resp.ETag
	}
	if resp.LeaseState != nil {
		r.state = string(*resp.LeaseState)
	}
	r.leased = r.state == string(lease.StateTypeLeased) || r.state == string(lease.StateTypeBreaking)
	return r, nil
}

// create creates key's blob, empty, with token 0, if it does not exist
// (If-None-Match: *). A blob that exists already is an error with code
// BlobAlreadyExists or ConditionNotMet.
func (d *store) create(ctx context.Context, key string) (record, error) {
	meta := map[string]*string{metaToken: ptr("0")}
	any := azcore.ETagAny
	resp, err := d.c.NewBlockBlobClient(key).Upload(ctx, streaming.NopCloser(bytes.NewReader(nil)), &blockblob.UploadOptions{
		Metadata: meta,
		AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &any},
		},
	})
	if err != nil {
		return record{}, azblobconn.OneLine(err)
	}
	r := record{meta: meta}
	if resp.ETag != nil {
		r.etag = *resp.ETag
	}
	return r, nil
}

// leaseClient returns the SDK's lease client for key's blob and leaseID.
func (d *store) leaseClient(key, leaseID string) (*lease.BlobClient, error) {
	return lease.NewBlobClient(d.c.NewBlobClient(key), &lease.BlobClientOptions{LeaseID: &leaseID})
}

// acquireLease takes a lease of ttl with id leaseID on key's blob if its
// ETag is still etag (unconditionally when etag is empty). It returns the blob's ETag after the lease (the
// same, as lease operations do not change it, where the service says so).
func (d *store) acquireLease(ctx context.Context, key, leaseID string, ttl time.Duration, etag azcore.ETag) (azcore.ETag, error) {
	lc, err := d.leaseClient(key, leaseID)
	if err != nil {
		return "", err
	}
	var opts *lease.BlobAcquireOptions
	if etag != "" {
		opts = &lease.BlobAcquireOptions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}
	}
	resp, err := lc.AcquireLease(ctx, int32(ttl/time.Second), opts)
	if err != nil {
		return "", azblobconn.OneLine(err)
	}
	if resp.ETag != nil {
		return *resp.ETag, nil
	}
	return etag, nil
}

// setMeta replaces the metadata of key's blob with meta under the lease
// leaseID, if the blob's ETag is still etag.
func (d *store) setMeta(ctx context.Context, key, leaseID string, etag azcore.ETag, meta map[string]*string) error {
	_, err := d.c.NewBlobClient(key).SetMetadata(ctx, meta, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{
		LeaseAccessConditions:    &blob.LeaseAccessConditions{LeaseID: &leaseID},
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag},
	}})
	return azblobconn.OneLine(err)
}

// renewLease renews the lease leaseID on key's blob for its duration.
func (d *store) renewLease(ctx context.Context, key, leaseID string) error {
	lc, err := d.leaseClient(key, leaseID)
	if err != nil {
		return err
	}
	_, err = lc.RenewLease(ctx, nil)
	return azblobconn.OneLine(err)
}

// releaseLease releases the lease leaseID on key's blob.
func (d *store) releaseLease(ctx context.Context, key, leaseID string) error {
	lc, err := d.leaseClient(key, leaseID)
	if err != nil {
		return err
	}
	_, err = lc.ReleaseLease(ctx, nil)
	return azblobconn.OneLine(err)
}

// breakLease breaks any lease on key's blob at once (break period 0).
func (d *store) breakLease(ctx context.Context, key string) error {
	lc, err := d.leaseClient(key, fence.NewOwnerID())
	if err != nil {
		return err
	}
	var now int32
	_, err = lc.BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: &now})
	return azblobconn.OneLine(err)
}
