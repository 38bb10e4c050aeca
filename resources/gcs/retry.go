package gcs

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"google.golang.org/api/googleapi"
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

// backoff hands out doubling, jittered pauses.
type backoff struct {
	opts *Options
	n    int // pauses handed out so far
}

// next returns the pause after an attempt that ended with o: a random
// duration between half and all of first*2^n, capped at MaxBackoff.
func (b *backoff) next(o outcome) time.Duration {
	first := b.opts.ConflictBackoff
	if o == throttled {
		first = b.opts.RateLimitBackoff
	}
	d := first
	for i := 0; i < b.n && d < b.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, b.opts.MaxBackoff)
	b.n++
	return d/2 + rand.N(d/2+1)
}

// sleep waits for d or until ctx is done, and then returns ctx.Err().
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
