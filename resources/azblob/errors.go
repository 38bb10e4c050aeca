package azblob

import (
	"errors"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

// responseOf returns the service's answer in err, or nil when err carries
// none (the request failed in transport or was never sent).
func responseOf(err error) *azcore.ResponseError {
	if re, ok := errors.AsType[*azcore.ResponseError](err); ok {
		return re
	}
	return nil
}

// isCode reports whether err is an answer of the service with one of
// codes.
func isCode(err error, codes ...bloberror.Code) bool { return bloberror.HasCode(err, codes...) }

// isNotFound reports an answer that the blob does not exist. A missing
// container is not a missing blob.
func isNotFound(err error) bool {
	re := responseOf(err)
	return re != nil && re.StatusCode == http.StatusNotFound && !isCode(err, bloberror.ContainerNotFound)
}

// lostRace reports that a conditional write failed because the blob
// changed since it was read: 412 ConditionNotMet (If-Match on another
// ETag, or If-None-Match: * on a blob that exists), or 409
// BlobAlreadyExists (Azure's answer to If-None-Match: * on Put Blob).
func lostRace(err error) bool {
	re := responseOf(err)
	if re == nil {
		return false
	}
	switch re.StatusCode {
	case http.StatusPreconditionFailed:
		return isCode(err, bloberror.ConditionNotMet) || re.ErrorCode == ""
	case http.StatusConflict:
		return isCode(err, bloberror.BlobAlreadyExists)
	}
	return false
}

// ambiguous reports an error after which a write may have been applied:
// no answer at all, or a server error (Azure's 500 OperationTimedOut
// says the operation "may or may not have succeeded").
func ambiguous(err error) bool {
	re := responseOf(err)
	return re == nil || re.StatusCode >= 500
}
