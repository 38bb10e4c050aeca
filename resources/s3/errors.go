package s3

import (
	"errors"

	"github.com/aws/smithy-go"

	"github.com/fencekit/fence/driver"
)

// statusOf returns the HTTP status of S3's answer in err, or 0 when err
// carries no answer (the request failed in transport or was never sent).
func statusOf(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// codeOf returns S3's error code in err ("NoSuchKey"), or "".
func codeOf(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// isNotFound reports a 404 answer: no such key. A missing bucket is not a
// missing key (GetObject and PutObject say NoSuchBucket; HeadObject, which
// has no body, cannot: see bucket.absent).
func isNotFound(err error) bool {
	return statusOf(err) == 404 && codeOf(err) != "NoSuchBucket"
}

// missingBucket returns err as an error matching fence.ErrStoreMissing
// when it is S3's NoSuchBucket, and err otherwise.
func missingBucket(err error) error {
	if codeOf(err) == "NoSuchBucket" {
		return driver.StoreMissing(err)
	}
	return err
}

// lostRace reports that a conditional PUT failed because the object
// changed since it was read: 412 Precondition Failed, or 409
// ConditionalRequestConflict (S3's answer to concurrent conditional writes
// on one key).
func lostRace(err error) bool {
	switch statusOf(err) {
	case 412:
		return true
	case 409:
		return codeOf(err) == "ConditionalRequestConflict"
	}
	return false
}

// ambiguous reports an error after which the PUT may have been applied: no
// answer at all, or a server error.
func ambiguous(err error) bool {
	s := statusOf(err)
	return s == 0 || s >= 500
}
