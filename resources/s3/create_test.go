package s3

import (
	"testing"

	"github.com/fencekit/fence/internal/testing/createtest"
)

// TestConcurrentCreate checks that replicas starting together may all
// create the bucket: three resources opened from one s3:// URL of a fresh
// bucket, each with a client of its own, call Create at once, and each
// succeeds.
func TestConcurrentCreate(t *testing.T) {
	t.Parallel()
	c := newClient(t, nil)
	createtest.Race(t, func(t *testing.T, n int) []createtest.Create {
		bucket := uniqueName("fence-create-")
		t.Cleanup(func() { removeBucket(t, c, bucket) })
		raw := emulatorURL(t, bucket)
		return createtest.OpenResources(t, raw, n)
	})
}
