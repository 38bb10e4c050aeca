package s3

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
)

// A record deleted by hand (what the package doc warns against) is gone
// for a Locker that remembers it: its If-Match write is answered 404
// NoSuchKey, which it takes as a lost race. Renew then finds the lease
// not held, and Acquire starts the key's tokens again at 1.
func TestDeletedRecordRestartsTheTokens(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	l := newLocker(t, bucket, nil, nil)
	held := acquire(t, l, "k", MinTTL*10)
	if err := l.Release(t.Context(), acquire(t, l, "k2", MinTTL*10)); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"k", "k2"} {
		if _, err := newClient(t, nil).DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(l.object(key))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Renew(t.Context(), held); !errors.Is(err, fence.ErrNotHeld) {
		t.Errorf("Renew of a lease whose record was deleted: %v; want ErrNotHeld", err)
	}
	// l remembers k2 free at token 1: its write on that ETag meets 404.
	again, err := l.Acquire(t.Context(), "k2", MinTTL, nil)
	if err != nil || again.Token != 1 {
		t.Errorf("Acquire of a key whose record was deleted = %+v, %v; want token 1 again", again, err)
	}
}
