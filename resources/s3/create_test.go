package s3

import (
	"testing"

	"github.com/fencekit/fence/internal/testing/createtest"
	"github.com/fencekit/fence/internal/testing/emulators"
)

// TestConcurrentCreate checks that replicas starting together may all
// create the bucket: three resources opened from one s3:// URL of a fresh
// bucket, each with a client of its own, call Create at once, and each
// succeeds.
func TestConcurrentCreate(t *testing.T) {
	t.Parallel()
	c := newClient(t, nil)
	createtest.Race(t, func(t *testing.T, n int) []createtest.Create {
		bucket := emulators.UniqueName("fence-create-")
		t.Cleanup(func() { emulators.RemoveS3Bucket(t, c, bucket) })
		raw := emulatorURL(t, bucket)
		return createtest.OpenResources(t, raw, n)
	})
}
