package s3conn

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// StatusOf returns the HTTP status of S3's answer in err, or 0 when err
// carries no answer (the request failed in transport or was never sent).
func StatusOf(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// CodeOf returns S3's error code in err ("NoSuchKey"), or "".
func CodeOf(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// LostRace reports that a conditional PUT failed because the object
// changed since it was read: 412 Precondition Failed, or 409
// ConditionalRequestConflict (S3's answer to concurrent conditional writes
// on one key).
func LostRace(err error) bool {
	switch StatusOf(err) {
	case 412:
		return true
	case 409:
		return CodeOf(err) == "ConditionalRequestConflict"
	}
	return false
}

// CreateBucket creates bucket in the client's region; one this account
// owns already is not an error. Versioning stays off, as on every new
// bucket. Its errors are the SDK's, bare.
func CreateBucket(ctx context.Context, client *s3.Client, bucket string) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(bucket)}
	// us-east-1 is the default location and may not be named.
	if region := client.Options().Region; region != "" && region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(region)}
	}
	_, err := client.CreateBucket(ctx, in)
	if _, mine := errors.AsType[*types.BucketAlreadyOwnedByYou](err); mine {
		return nil
	}
	return err
}
