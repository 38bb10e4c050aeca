package s3

import (
	"bytes"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence/internal/s3conn"
)

// TestMinIOHonoursConditionalPut checks the foundation of the package on
// the server under test: PutObject with If-None-Match: * fails with 412
// when the object exists, and with If-Match fails with 412 unless the ETag
// is the object's.
func TestMinIOHonoursConditionalPut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	put := func(key, ifMatch, ifNoneMatch string) (string, int) {
		in := &s3.PutObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(key), Body: bytes.NewReader([]byte(key + ifMatch + ifNoneMatch))}
		if ifMatch != "" {
			in.IfMatch = aws.String(ifMatch)
		}
		if ifNoneMatch != "" {
			in.IfNoneMatch = aws.String(ifNoneMatch)
		}
		out, err := e.client.PutObject(t.Context(), in)
		if err != nil {
			return "", s3conn.StatusOf(err)
		}
		return aws.ToString(out.ETag), 200
	}
	etag, st := put("a", "", "*")
	if st != 200 {
		t.Fatalf("If-None-Match: * on a new key: status %d, want 200", st)
	}
	if _, st := put("a", "", "*"); st != 412 {
		t.Errorf("If-None-Match: * on an existing key: status %d, want 412", st)
	}
	if _, st := put("a", `"0123456789abcdef0123456789abcdef"`, ""); st != 412 {
		t.Errorf("If-Match with another ETag: status %d, want 412", st)
	}
	if _, st := put("a", etag, ""); st != 200 {
		t.Errorf("If-Match with the object's ETag: status %d, want 200", st)
	}
	if _, st := put("a", etag, ""); st != 412 {
		t.Errorf("If-Match with the ETag the last write replaced: status %d, want 412", st)
	}
	// On a missing key S3 answers 404 NoSuchKey; MinIO may answer 412.
	// Either way the PUT must fail.
	if _, st := put("missing", etag, ""); st == 200 {
		t.Errorf("If-Match on a missing key succeeded")
	} else {
		t.Logf("If-Match on a missing key: status %d", st)
	}
}
