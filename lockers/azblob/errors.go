package azblob

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence/driver"
)

// notHeldCodes are the service's answers to a lease operation (or a write
// under a lease id) that mean the lease is not, or no longer, the caller's.
var notHeldCodes = []bloberror.Code{
	bloberror.LeaseIDMismatchWithLeaseOperation,
	bloberror.LeaseIDMismatchWithBlobOperation,
	bloberror.LeaseNotPresentWithLeaseOperation,
	bloberror.LeaseNotPresentWithBlobOperation,
	bloberror.LeaseIsBrokenAndCannotBeRenewed,
	bloberror.LeaseIsBreakingAndCannotBeAcquired,
	bloberror.LeaseIsBreakingAndCannotBeChanged,
	bloberror.LeaseLost,
	bloberror.LeaseIDMissing,
	bloberror.BlobNotFound,
}

// isNotHeld reports whether err is one of notHeldCodes.
func isNotHeld(err error) bool { return bloberror.HasCode(err, notHeldCodes...) }

// answered reports whether err is a refusal by the service: an HTTP
// response with a 4xx status, after which the request is known not to
// have been applied. Any other error leaves that unknown: a transport
// failure, ctx ending, or a 5xx status (Azure's 500 OperationTimedOut
// says the operation "may or may not have succeeded").
func answered(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode >= 400 && re.StatusCode < 500
}

// serviceError is an answer of the service refusing a request, told in
// one line: the HTTP status and Azure's error code. The SDK's
// *azcore.ResponseError prints a multi-line dump of the request and the
// response instead, which does not belong inside the locker's errors (a
// fence.LeaseLostError, a log line). Unwrap returns the SDK's error, so
// errors.As and bloberror.HasCode reach it as before.
type serviceError struct{ err *azcore.ResponseError }

func (e *serviceError) Error() string {
	code := e.err.ErrorCode
	if code == "" {
		code = "no error code"
	}
	status := strconv.Itoa(e.err.StatusCode)
	if text := http.StatusText(e.err.StatusCode); text != "" {
		status += " " + text
	}
	return fmt.Sprintf("azure: %s: %s", status, code)
}

func (e *serviceError) Unwrap() error { return e.err }

// oneLine returns err with an *azcore.ResponseError at its top wrapped in
// a serviceError, and any other error unchanged. A ContainerNotFound
// answer also matches fence.ErrStoreMissing. The calls of blob.go pass
// every SDK error through it.
func oneLine(err error) error {
	re, ok := err.(*azcore.ResponseError)
	if !ok {
		return err
	}
	if bloberror.HasCode(re, bloberror.ContainerNotFound) {
		return driver.StoreMissing(fmt.Errorf("%w (create the container with Create)", &serviceError{err: re}))
	}
	return &serviceError{err: re}
}

// wrap adds what the store was doing to an error, with an SDK answer
// told in one line (see serviceError).
func wrap(what string, err error) error {
	return fmt.Errorf("%s: %w", what, oneLine(err))
}
