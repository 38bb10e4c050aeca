package azblobconn

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/fencekit/fence/driver"
)

// serviceError is an answer of the service told in one line: the HTTP
// status and Azure's error code. The SDK's *azcore.ResponseError prints a
// multi-line dump of the request and the response instead, which does
// not belong inside a backend's errors (a fence.LeaseLostError, a log
// line). Unwrap returns the SDK's error, so errors.As and
// bloberror.HasCode reach it.
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

// OneLine returns err with an *azcore.ResponseError at its top wrapped in
// an error that prints as one line (the status and Azure's error code),
// and any other error unchanged. A ContainerNotFound answer also matches
// fence.ErrStoreMissing. errors.As and bloberror.HasCode still reach the
// SDK's error.
func OneLine(err error) error {
	re, ok := err.(*azcore.ResponseError)
	if !ok {
		return err
	}
	if bloberror.HasCode(re, bloberror.ContainerNotFound) {
		return driver.StoreMissing(fmt.Errorf("%w (create the container with Create)", &serviceError{err: re}))
	}
	return &serviceError{err: re}
}
