package gcs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/objlock"
)

// objects is the objlock.Bucket of one Cloud Storage bucket: a version is
// an object generation in decimal. It is the only code that calls Cloud
// Storage.
type objects struct {
	bucket *storage.BucketHandle
	// bucketSeen is set once the bucket was found to exist (or could not
	// be asked about): a read of a missing object needs no more checks.
	bucketSeen atomic.Bool
}

var _ objlock.Bucket = (*objects)(nil)

// handle returns the handle of object name with the SDK's retries off:
// objlock retries itself, so that it can reconcile each attempt.
func (s *objects) handle(name string) *storage.ObjectHandle {
	return s.bucket.Object(name).Retryer(storage.WithPolicy(storage.RetryNever))
}

// Classify implements objlock.Bucket.
func (s *objects) Classify(err error) objlock.Outcome {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		switch {
		case ge.Code == http.StatusTooManyRequests:
			return objlock.Throttled
		case ge.Code == http.StatusRequestTimeout || ge.Code >= 500:
			return objlock.Unknown
		}
		return objlock.Fatal
	}
	if errors.Is(err, storage.ErrObjectNotExist) || errors.Is(err, storage.ErrBucketNotExist) {
		return objlock.Fatal
	}
	return objlock.Unknown // the transport failed: no answer came back
}

// Read implements objlock.Bucket: one read of object name and its
// generation. The first read of a missing object also asks for the
// bucket (see checkBucket).
func (s *objects) Read(ctx context.Context, name string) ([]byte, string, bool, error) {
	r, err := s.handle(name).NewReader(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) {
		if !s.bucketSeen.Load() {
			if err := s.checkBucket(ctx); err != nil {
				return nil, "", false, err
			}
		}
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, objlock.MaxRecordLen+1))
	if err != nil {
		return nil, "", false, err
	}
	return data, formatGen(r.Attrs.Generation), true, nil
}

// Write implements objlock.Bucket: one single-request upload with the
// precondition ifGenerationMatch on ifVersion, or ifGenerationMatch=0
// (does not exist) when ifVersion is "". A 412 is objlock.ErrConflict.
func (s *objects) Write(ctx context.Context, name, ifVersion string, data []byte) (string, error) {
	cond := storage.Conditions{DoesNotExist: true}
	if ifVersion != "" {
		gen, err := parseGen(ifVersion)
		if err != nil {
			return "", err
		}
		cond = storage.Conditions{GenerationMatch: gen}
	}
	w := s.handle(name).If(cond).NewWriter(ctx)
	w.ChunkSize = 0 // one request, no resumable session
	w.ContentType = "application/json"
	w.CacheControl = "no-store"
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return "", err
	}
	if err := w.Close(); err != nil {
		var ge *googleapi.Error
		if errors.As(err, &ge) && ge.Code == http.StatusNotFound {
			if berr := s.checkBucket(ctx); berr != nil {
				return "", berr
			}
		}
		if errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed {
			return "", fmt.Errorf("%w: %w", objlock.ErrConflict, err)
		}
		return "", err
	}
	return formatGen(w.Attrs().Generation), nil
}

// Probe implements objlock.Bucket: one metadata read on the condition
// that the generation is no longer prev (Cloud Storage answers 304 Not
// Modified, without a body, when it still is).
func (s *objects) Probe(ctx context.Context, name, prev string) (objlock.Change, error) {
	gen, err := parseGen(prev)
	if err != nil {
		return 0, err
	}
	attrs, err := s.handle(name).If(storage.Conditions{GenerationNotMatch: gen}).Attrs(ctx)
	var ge *googleapi.Error
	switch {
	case errors.As(err, &ge) && ge.Code == http.StatusNotModified, err == nil && attrs.Generation == gen:
		return objlock.Same, nil
	case errors.Is(err, storage.ErrObjectNotExist):
		return objlock.Gone, nil
	case err != nil:
		return 0, err
	}
	return objlock.Changed, nil
}

// formatGen and parseGen convert between a generation and its version.
func formatGen(gen int64) string { return strconv.FormatInt(gen, 10) }

func parseGen(version string) (int64, error) {
	gen, err := strconv.ParseInt(version, 10, 64)
	if err != nil || gen <= 0 {
		return 0, fmt.Errorf("version %q is not a generation", version)
	}
	return gen, nil
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
