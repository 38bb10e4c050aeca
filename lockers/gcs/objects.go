package gcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
)

// errConflict reports a write refused by its generation precondition
// (HTTP 412): another write came first.
var errConflict = errors.New("generation precondition failed")

// objects reads and writes whole small objects of one bucket, with the
// retries and reconciliation of the package doc. It is the only code that
// calls Cloud Storage.
type objects struct {
	bucket   *storage.BucketHandle
	attempts int
	backoff  backoff.Policy
	// bucketSeen is set once the bucket was found to exist (or could not
	// be asked about): a read of a missing object needs no more checks.
	bucketSeen atomic.Bool
}

// handle returns the handle of object name with the SDK's retries off:
// objects retries itself, so that it can reconcile each attempt.
func (s *objects) handle(name string) *storage.ObjectHandle {
	return s.bucket.Object(name).Retryer(storage.WithPolicy(storage.RetryNever))
}

// outcome classifies a failed request.
type outcome int

const (
	fatal     outcome = iota // a definite refusal: return it
	throttled                // 429: refused, try again later
	unknown                  // 408, 5xx, a connection failure: it may have been applied
)

func classify(err error) outcome {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		switch {
		case ge.Code == http.StatusTooManyRequests:
			return throttled
		case ge.Code == http.StatusRequestTimeout || ge.Code >= 500:
			return unknown
		}
		return fatal
	}
	if errors.Is(err, storage.ErrObjectNotExist) || errors.Is(err, storage.ErrBucketNotExist) {
		return fatal
	}
	return unknown // the transport failed: no answer came back
}

// read returns the content and generation of object name; found is false
// when it does not exist. Throttled and failed reads are retried.
func (s *objects) read(ctx context.Context, name string) (data []byte, gen int64, found bool, err error) {
	for attempt := 1; ; attempt++ {
		data, gen, found, err = s.readOnce(ctx, name)
		if err == nil {
			return data, gen, found, nil
		}
		if err := s.wait(ctx, attempt, "read", name, err); err != nil {
			return nil, 0, false, err
		}
	}
}

func (s *objects) readOnce(ctx context.Context, name string) ([]byte, int64, bool, error) {
	r, err := s.handle(name).NewReader(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) {
		if !s.bucketSeen.Load() {
			if err := s.checkBucket(ctx); err != nil {
				return nil, 0, false, err
			}
		}
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxRecordLen+1))
	if err != nil {
		return nil, 0, false, err
	}
	return data, r.Attrs.Generation, true, nil
}

// write uploads data as object name on the condition that its generation
// is ifGen, or that it does not exist when ifGen is 0, and returns the new
// generation. A write refused by the condition returns errConflict. A
// throttled write is retried; a write whose outcome is unknown is
// reconciled by reading the object back (see the package doc).
func (s *objects) write(ctx context.Context, name string, ifGen int64, data []byte) (int64, error) {
	ambiguous := false // an earlier attempt may have been applied
	for attempt := 1; ; attempt++ {
		gen, err := s.writeOnce(ctx, name, ifGen, data)
		if err == nil {
			return gen, nil
		}
		if ctx.Err() != nil {
			// The portable layer adds ctx's error.
			return 0, fmt.Errorf("write %q: %w", name, err)
		}
		if isConflict(err) {
			if ambiguous {
				// Our earlier attempt may be what changed the object.
				if gen, applied, rerr := s.reconcile(ctx, name, ifGen, data); rerr != nil || applied {
					return gen, rerr
				}
			}
			return 0, errConflict
		}
		if classify(err) == unknown {
			ambiguous = true
			gen, applied, rerr := s.reconcile(ctx, name, ifGen, data)
			if rerr != nil || applied {
				return gen, rerr
			}
		}
		if err := s.wait(ctx, attempt, "write", name, err); err != nil {
			return 0, err
		}
	}
}

// reconcile reads object name after a write of data on the condition ifGen
// whose outcome is unknown. applied is true (with the generation) when the
// object holds data; errConflict comes back when another write changed it;
// neither means the write did not land and may be tried again.
func (s *objects) reconcile(ctx context.Context, name string, ifGen int64, data []byte) (gen int64, applied bool, err error) {
	got, gen, found, err := s.read(ctx, name)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("write of %q had no answer and reading it back failed: %w", name, err)
	case found && bytes.Equal(got, data):
		return gen, true, nil
	case found != (ifGen != 0) || gen != ifGen:
		return 0, false, errConflict
	}
	return 0, false, nil
}

func (s *objects) writeOnce(ctx context.Context, name string, ifGen int64, data []byte) (int64, error) {
	cond := storage.Conditions{GenerationMatch: ifGen}
	if ifGen == 0 {
		cond = storage.Conditions{DoesNotExist: true}
	}
	w := s.handle(name).If(cond).NewWriter(ctx)
	w.ChunkSize = 0 // one request, no resumable session
	w.ContentType = "application/json"
	w.CacheControl = "no-store"
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return 0, err
	}
	if err := w.Close(); err != nil {
		var ge *googleapi.Error
		if errors.As(err, &ge) && ge.Code == http.StatusNotFound {
			if berr := s.checkBucket(ctx); berr != nil {
				return 0, berr
			}
		}
		return 0, err
	}
	return w.Attrs().Generation, nil
}

// checkBucket tells a missing bucket apart from a missing object: Cloud
// Storage answers 404 to both, and the SDK reports every 404 of an object
// read as storage.ErrObjectNotExist. It returns an error matching
// storage.ErrBucketNotExist and fence.ErrStoreMissing when the bucket does
// not exist, and nil when it does or when the caller may not ask (403: the
// object's own answer stands); other failures are returned to be retried.
func (s *objects) checkBucket(ctx context.Context) error {
	_, err := s.bucket.Attrs(ctx)
	var ge *googleapi.Error
	switch {
	case err == nil, errors.As(err, &ge) && ge.Code == http.StatusForbidden:
		s.bucketSeen.Store(true)
		return nil
	case errors.Is(err, storage.ErrBucketNotExist):
		return driver.StoreMissing(fmt.Errorf("bucket %q: %w (create it with CreateBucket)", s.bucket.BucketName(), err))
	}
	return err
}

func isConflict(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed
}

// wait decides what follows the failed attempt number attempt of op on
// name: nil after a jittered backoff when the request may be tried again,
// or the error to return. When ctx ends, the portable layer adds its
// error.
func (s *objects) wait(ctx context.Context, attempt int, op, name string, err error) error {
	switch {
	case ctx.Err() != nil, classify(err) == fatal:
		return fmt.Errorf("%s %q: %w", op, name, err)
	case attempt >= s.attempts:
		return fmt.Errorf("%s %q: gave up after %d attempts: %w", op, name, attempt, err)
	}
	if backoff.Sleep(ctx, s.backoff.Delay(attempt)) != nil {
		return fmt.Errorf("%s %q: %w", op, name, err)
	}
	return nil
}
