package azblob

import (
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence/internal/azblobconn"
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

// wrap adds what the store was doing to an error, with an SDK answer
// told in one line (see azblobconn.OneLine).
func wrap(what string, err error) error {
	return fmt.Errorf("%s: %w", what, azblobconn.OneLine(err))
}
