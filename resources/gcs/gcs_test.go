package gcs

import (
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
)

// TestConformance runs the resource suite on fake-gcs-server, every
// Resource on its own client to one bucket of this run. The emulator never
// rate-limits, so the concurrency case runs its default load on one
// object; on real Cloud Storage (about one write per second per object)
// lower Writers and WritesPerWriter.
func TestConformance(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t, newClient(t, nil))
	resourcetest.Run(t, resourcetest.Harness{
		New: func(t *testing.T) fence.Resource {
			return newResource(t, newClient(t, nil).Bucket(bucket.BucketName()), fastOptions)
		},
		MaxNameLen: MaxNameLen,
	})
}
