package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/objlock"
	"github.com/fencekit/fence/internal/s3conn"
)

// objects is the objlock.Bucket of one S3 bucket: a version is an ETag.
// It is the only code that calls S3.
type objects struct {
	client *s3.Client
	bucket string
}

var _ objlock.Bucket = (*objects)(nil)

// once turns the client's retries off for one call: objlock retries
// itself, so that it can reconcile each attempt. The client is otherwise
// used as it is.
func once(o *s3.Options) { o.RetryMaxAttempts = 1 }

// Classify implements objlock.Bucket.
func (s *objects) Classify(err error) objlock.Outcome {
	if errors.Is(err, fence.ErrInvalid) {
		return objlock.Fatal // refusedKey's
	}
	switch s := s3conn.StatusOf(err); {
	case s == 0:
		return objlock.Unknown // the transport failed: no answer came back
	case s == 429:
		return objlock.Throttled
	case s == 501:
		return objlock.Fatal // NotImplemented: a server without conditional writes
	case s == 408 || s >= 500:
		return objlock.Unknown // 503 SlowDown among them
	}
	return objlock.Fatal
}

// refusedKey returns a *fence.InvalidError when err is the store's
// refusal of an object key (S3's KeyTooLongError; MinIO's
// XMinioInvalidObjectName and XMinioInvalidResourceName, for keys with
// empty, "." or ".." segments among others), and nil otherwise.
func refusedKey(err error) error {
	switch code := s3conn.CodeOf(err); code {
	case "KeyTooLongError", "XMinioInvalidObjectName", "XMinioInvalidResourceName":
		return &fence.InvalidError{Field: "key", Reason: "the store refuses the object key (" + code + ")"}
	}
	return nil
}

// missingBucket returns an error matching fence.ErrStoreMissing when err
// is S3's NoSuchBucket, and nil otherwise.
func (s *objects) missingBucket(err error) error {
	if s3conn.CodeOf(err) != "NoSuchBucket" {
		return nil
	}
	return driver.StoreMissing(fmt.Errorf("bucket %q: %w (create it with the Locker's Create)", s.bucket, err))
}

// Read implements objlock.Bucket: one GetObject. S3 answers NoSuchKey for a missing object
// and NoSuchBucket for a missing bucket; without s3:ListBucket it answers
// 403 to a missing object, which is returned as it is.
func (s *objects) Read(ctx context.Context, name string) ([]byte, string, bool, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(name)}, once)
	if err != nil {
		if merr := s.missingBucket(err); merr != nil {
			return nil, "", false, merr
		}
		if s3conn.StatusOf(err) == 404 {
			return nil, "", false, nil
		}
		if kerr := refusedKey(err); kerr != nil {
			return nil, "", false, kerr
		}
		return nil, "", false, err
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, objlock.MaxRecordLen+1))
	if err != nil {
		return nil, "", false, err
	}
	return data, aws.ToString(out.ETag), true, nil
}

// isConflict reports whether err refuses a write on the condition ifETag
// because the object changed: 412, 409 ConditionalRequestConflict, or,
// for If-Match, 404 (the object is gone; S3 answers NoSuchKey).
func isConflict(err error, ifETag string) bool {
	return s3conn.LostRace(err) || s3conn.StatusOf(err) == 404 && ifETag != ""
}

// Write implements objlock.Bucket: one PutObject on the condition
// If-Match: ifETag, or If-None-Match: * when ifETag is "". A refusal by
// the condition (see isConflict) is objlock.ErrConflict.
func (s *objects) Write(ctx context.Context, name, ifETag string, data []byte) (string, error) {
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(name),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String("application/json"),
		CacheControl:  aws.String("no-store"),
	}
	if ifETag == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(ifETag)
	}
	out, err := s.client.PutObject(ctx, in, once)
	if err == nil {
		return aws.ToString(out.ETag), nil
	}
	if merr := s.missingBucket(err); merr != nil {
		return "", merr
	}
	if kerr := refusedKey(err); kerr != nil {
		return "", kerr
	}
	if isConflict(err, ifETag) {
		return "", fmt.Errorf("%w: %w", objlock.ErrConflict, err)
	}
	return "", err
}

// Probe implements objlock.Bucket: one HEAD request on the condition
// that the ETag is no longer prev (If-None-Match: S3 answers 304 Not
// Modified when it still is).
func (s *objects) Probe(ctx context.Context, name, prev string) (objlock.Change, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(name), IfNoneMatch: aws.String(prev),
	}, once)
	switch {
	case s3conn.StatusOf(err) == 304, err == nil && aws.ToString(out.ETag) == prev:
		return objlock.Same, nil
	case s3conn.StatusOf(err) == 404:
		return objlock.Gone, nil
	case err != nil:
		return 0, err
	}
	return objlock.Changed, nil
}

// createBucket creates the bucket (s3conn.CreateBucket). Its errors are
// bare but for the bucket's name: the *fence.Locker's Create wraps them.
func (s *objects) createBucket(ctx context.Context) error {
	if err := s3conn.CreateBucket(ctx, s.client, s.bucket); err != nil {
		return fmt.Errorf("bucket %q: %w", s.bucket, err)
	}
	return nil
}
