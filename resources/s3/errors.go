package s3

import (
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/s3conn"
)

// isNotFound reports a 404 answer: no such key. A missing bucket is not a
// missing key (GetObject and PutObject say NoSuchBucket; HeadObject, which
// has no body, cannot: see bucket.absent).
func isNotFound(err error) bool {
	return s3conn.StatusOf(err) == 404 && s3conn.CodeOf(err) != "NoSuchBucket"
}

// missingBucket returns err as an error matching fence.ErrStoreMissing
// when it is S3's NoSuchBucket, and err otherwise.
func missingBucket(err error) error {
	if s3conn.CodeOf(err) == "NoSuchBucket" {
		return driver.StoreMissing(err)
	}
	return err
}

// ambiguous reports an error after which the PUT may have been applied: no
// answer at all, or a server error.
func ambiguous(err error) bool {
	s := s3conn.StatusOf(err)
	return s == 0 || s >= 500
}
