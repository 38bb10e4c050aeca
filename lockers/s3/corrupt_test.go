package s3

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/objlock/objlocktest"
)

// A record corrupted by hand is refused by every method with a
// *fence.CorruptError, which does not match fence.ErrInvalid (the record is
// at fault, not the caller's input), and nothing is written over it: by a Locker that
// never saw the key, and by the holder whose remembered ETag is
// stale.
func TestCorruptedRecordIsNeitherUsedNorOverwritten(t *testing.T) {
	t.Parallel()
	bucket := newBucket(t)
	for _, tc := range objlocktest.BadRecords {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			holder := newLocker(t, bucket, nil, &Options{Prefix: "corrupt/"})
			key := tc.Name
			lease := acquire(t, holder, key, MinTTL*10)
			name := holder.object(key)
			etag := writeRaw(t, bucket, name, []byte(tc.Data))
			stranger := newLocker(t, bucket, nil, &Options{Prefix: "corrupt/"})
			for _, l := range []struct {
				who string
				l   *testLocker
			}{{"holder", holder}, {"stranger", stranger}} {
				_, err := l.l.Acquire(t.Context(), key, MinTTL, nil)
				wantCorrupt(t, err, l.who+" Acquire", key)
				_, err = l.l.Renew(t.Context(), lease)
				wantCorrupt(t, err, l.who+" Renew", key)
				wantCorrupt(t, l.l.Release(t.Context(), lease), l.who+" Release", key)
				wantCorrupt(t, l.l.Break(t.Context(), key), l.who+" Break", key)
				_, err = l.l.Inspect(t.Context(), key)
				wantCorrupt(t, err, l.who+" Inspect", key)
			}
			if got := etagOf(t, bucket, name); got != etag {
				t.Fatalf("the corrupted object's ETag went from %s to %s: something wrote over it", etag, got)
			}
		})
	}
}

func wantCorrupt(t *testing.T, err error, call, key string) {
	t.Helper()
	ce, ok := errors.AsType[*fence.CorruptError](err)
	if !ok || !errors.Is(err, fence.ErrCorrupt) {
		t.Errorf("%s returned %v; want a *fence.CorruptError", call, err)
		return
	}
	if ce.Key != key {
		t.Errorf("%s returned a CorruptError for key %q; want %q", call, ce.Key, key)
	}
	if errors.Is(err, fence.ErrInvalid) {
		t.Errorf("%s returned %v, which matches fence.ErrInvalid; a corrupted record is not bad input", call, err)
	}
}

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
