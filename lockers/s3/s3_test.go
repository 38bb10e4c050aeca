package s3

import (
	"testing"

	"github.com/fencekit/fence/internal/objlock/objlocktest"
)

// TestConformance runs lockertest's suite on MinIO (see
// objlocktest.Conformance). The suite's keys have no slashes, so on MinIO
// the longest is 255 bytes, not S3's 1024 (see minioSegment).
func TestConformance(t *testing.T) {
	t.Parallel()
	objlocktest.Conformance(t, objHarness, minioSegment, MaxTTL)
}
