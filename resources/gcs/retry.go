package gcs

import (
	"errors"
	"net/http"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/fencekit/fence/internal/backoff"
)

// outcome classifies a failed write attempt.
type outcome int

const (
	// permanent: retrying cannot help (bad request, no permission, no
	// bucket); returned to the caller.
	permanent outcome = iota
	// conflict: 412, the object changed since its token was checked.
	conflict
	// throttled: 408, 429 or 5xx; the service asks to slow down.
	throttled
	// ambiguous: no answer; the write may or may not have been applied.
	ambiguous
)

// classify tells what a failed attempt means.
func classify(err error) outcome {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return ambiguous
	}
	switch {
	case ge.Code == http.StatusPreconditionFailed:
		return conflict
	case ge.Code == http.StatusRequestTimeout, ge.Code == http.StatusTooManyRequests, ge.Code >= 500:
		return throttled
	}
	return permanent
}

// isTooMany reports a 429: the service refused the write without applying it.
func isTooMany(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusTooManyRequests
}

// isNotFound reports a 404 to an upload, which can only mean that the
// bucket is missing (a missing object under a precondition gets 412).
func isNotFound(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusNotFound
}

// pause returns the wait before attempt n+1 (n >= 1) after one that ended
// with o: throttling starts from RateLimitBackoff, a conflict from
// ConflictBackoff, both doubling with n up to MaxBackoff.
func (b *bucket) pause(o outcome, n int) time.Duration {
	p := backoff.Policy{First: b.opts.ConflictBackoff, Max: b.opts.MaxBackoff}
	if o == throttled {
		p.First = b.opts.RateLimitBackoff
	}
	return p.Delay(n)
}
