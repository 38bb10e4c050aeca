package s3

import (
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
)

// minioOptions are the Options the tests use on MinIO, which refuses keys
// with a segment longer than 255 bytes between slashes.
var minioOptions = Options{MaxKeySegmentLen: 255}

// TestResourceSuite runs the resource conformance suite on MinIO, every
// Resource on one bucket. The suite's names have no slashes, so on MinIO
// the longest is 255 bytes, not S3's 1024: keys of up to 1024 bytes made
// of shorter segments are tested in TestKeyLimits; one segment of 256 to
// 1024 bytes, which S3 accepts, cannot be verified on MinIO.
func TestResourceSuite(t *testing.T) {
	t.Parallel()
	c := newClient(t, nil)
	bucket := newS3Bucket(t, c)
	resourcetest.Run(t, resourcetest.Harness{
		New: func(t *testing.T) *fence.Resource {
			o := minioOptions
			return testResource(t, newClient(t, nil), bucket, &o)
		},
		MaxKeyLen: minioOptions.MaxKeySegmentLen,
		// MinIO applies the first PUT; the transport drops its answer.
		LostAnswer: func(t *testing.T, after func()) *fence.Resource {
			f := newFaulty(t)
			f.add(rule{method: "PUT", n: 1, fault: drop, after: after})
			o := minioOptions
			return testResource(t, newClient(t, f, noRetries), bucket, &o)
		},
	})
}
