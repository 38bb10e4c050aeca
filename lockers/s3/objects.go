package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/backoff"
)

// errConflict reports a write refused by its condition: another write
// came first (412 Precondition Failed, or 409 ConditionalRequestConflict
// for a write concurrent with another), or the object it was to replace
// is gone (404 to If-Match).
var errConflict = errors.New("condition failed: the object changed")

// objects reads and writes whole small objects of one bucket, with the
// retries and reconciliation of the package doc. It is the only code that
// calls S3.
type objects struct {
	client   *s3.Client
	bucket   string
	attempts int
	backoff  backoff.Policy
}

// once turns the client's retries off for one call: objects retries
// itself, so that it can reconcile each attempt. The client is otherwise
// used as it is.
func once(o *s3.Options) { o.RetryMaxAttempts = 1 }

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

// outcome classifies a failed request.
type outcome int

const (
	fatal     outcome = iota // a definite refusal: return it
	throttled                // 429: refused, try again later
	unknown                  // 408, 5xx, a connection failure: it may have been applied
)

func classify(err error) outcome {
	if errors.Is(err, fence.ErrInvalid) {
		return fatal // refusedKey's
	}
	switch s := statusOf(err); {
	case s == 0:
		return unknown // the transport failed: no answer came back
	case s == 429:
		return throttled
	case s == 501:
		return fatal // NotImplemented: a server without conditional writes
	case s == 408 || s >= 500:
		return unknown // 503 SlowDown among them
	}
	return fatal
}

// refusedKey returns a *fence.InvalidError when err is the store's
// refusal of an object key (S3's KeyTooLongError; MinIO's
// XMinioInvalidObjectName and XMinioInvalidResourceName, for keys with
// empty, "." or ".." segments among others), and nil otherwise.
func refusedKey(err error) error {
	switch code := codeOf(err); code {
	case "KeyTooLongError", "XMinioInvalidObjectName", "XMinioInvalidResourceName":
		return &fence.InvalidError{Field: "key", Reason: "the store refuses the object key (" + code + ")"}
	}
	return nil
}

// missingBucket returns an error matching fence.ErrStoreMissing when err
// is S3's NoSuchBucket, and nil otherwise.
func (s *objects) missingBucket(err error) error {
	if codeOf(err) != "NoSuchBucket" {
		return nil
	}
	return driver.StoreMissing(fmt.Errorf("bucket %q: %w (create it with the Locker's Create)", s.bucket, err))
}

// read returns the content and ETag of object name; found is false when
// it does not exist. Throttled and failed reads are retried.
func (s *objects) read(ctx context.Context, name string) (data []byte, etag string, found bool, err error) {
	for attempt := 1; ; attempt++ {
		data, etag, found, err = s.readOnce(ctx, name)
		if err == nil {
			return data, etag, found, nil
		}
		if err := s.wait(ctx, attempt, "read", name, err); err != nil {
			return nil, "", false, err
		}
	}
}

// readOnce is one GetObject. S3 answers NoSuchKey for a missing object
// and NoSuchBucket for a missing bucket; without s3:ListBucket it answers
// 403 to a missing object, which is returned as it is.
func (s *objects) readOnce(ctx context.Context, name string) ([]byte, string, bool, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(name)}, once)
	if err != nil {
		if merr := s.missingBucket(err); merr != nil {
			return nil, "", false, merr
		}
		if statusOf(err) == 404 {
			return nil, "", false, nil
		}
		if kerr := refusedKey(err); kerr != nil {
			return nil, "", false, kerr
		}
		return nil, "", false, err
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, maxRecordLen+1))
	if err != nil {
		return nil, "", false, err
	}
	return data, aws.ToString(out.ETag), true, nil
}

// write uploads data as object name on the condition that its ETag is
// ifETag (If-Match), or that it does not exist when ifETag is ""
// (If-None-Match: *), and returns the new ETag. A write refused by the
// condition returns errConflict. A throttled write is retried; a write
// whose outcome is unknown is reconciled by reading the object back (see
// the package doc).
func (s *objects) write(ctx context.Context, name, ifETag string, data []byte) (string, error) {
	ambiguous := false // an earlier attempt may have been applied
	for attempt := 1; ; attempt++ {
		etag, err := s.writeOnce(ctx, name, ifETag, data)
		if err == nil {
			return etag, nil
		}
		if ctx.Err() != nil {
			// The portable layer adds ctx's error.
			return "", fmt.Errorf("write %q: %w", name, err)
		}
		if merr := s.missingBucket(err); merr != nil {
			return "", merr
		}
		if kerr := refusedKey(err); kerr != nil {
			return "", kerr
		}
		if s.isConflict(err, ifETag) {
			if ambiguous {
				// Our earlier attempt may be what changed the object.
				if etag, applied, rerr := s.reconcile(ctx, name, ifETag, data); rerr != nil || applied {
					return etag, rerr
				}
			}
			return "", errConflict
		}
		if classify(err) == unknown {
			ambiguous = true
			etag, applied, rerr := s.reconcile(ctx, name, ifETag, data)
			if rerr != nil || applied {
				return etag, rerr
			}
		}
		if err := s.wait(ctx, attempt, "write", name, err); err != nil {
			return "", err
		}
	}
}

// isConflict reports whether err refuses a write on the condition ifETag
// because the object changed: 412, 409 ConditionalRequestConflict, or,
// for If-Match, 404 (the object is gone; S3 answers NoSuchKey).
func (s *objects) isConflict(err error, ifETag string) bool {
	switch statusOf(err) {
	case 412:
		return true
	case 409:
		return codeOf(err) == "ConditionalRequestConflict"
	case 404:
		return ifETag != ""
	}
	return false
}

// reconcile reads object name after a write of data on the condition
// ifETag whose outcome is unknown. applied is true (with the ETag) when
// the object holds data; errConflict comes back when another write
// changed it; neither means the write did not land and may be tried
// again.
func (s *objects) reconcile(ctx context.Context, name, ifETag string, data []byte) (etag string, applied bool, err error) {
	got, etag, found, err := s.read(ctx, name)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("write of %q had no answer and reading it back failed: %w", name, err)
	case found && bytes.Equal(got, data):
		return etag, true, nil
	case found != (ifETag != "") || etag != ifETag:
		return "", false, errConflict
	}
	return "", false, nil
}

// writeOnce is one conditional PutObject.
func (s *objects) writeOnce(ctx context.Context, name, ifETag string, data []byte) (string, error) {
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
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
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

// createBucket creates the bucket in the client's region; one this
// account owns already is not an error. Versioning stays off, as on
// every new bucket. Its errors are bare: the *fence.Locker's Create wraps
// them.
func (s *objects) createBucket(ctx context.Context) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(s.bucket)}
	// us-east-1 is the default location and may not be named.
	if region := s.client.Options().Region; region != "" && region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(region)}
	}
	_, err := s.client.CreateBucket(ctx, in)
	if _, mine := errors.AsType[*types.BucketAlreadyOwnedByYou](err); mine {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bucket %q: %w", s.bucket, err)
	}
	return nil
}
